"""The control hypercalls (issue 9, scope item 1: domctl and sysctl with Xen 4.17's
structures, interface version 0x15), on ours and on Xen 4.17, from dom0 alone.

dom0 runs guest/selftest/control/selftest_domctl.cpp's selftest=domctl, whose expected values are Xen
4.17's: bad pointers -EFAULT, a stale interface version -EACCES, an unknown sub-op -ENOSYS, a
domain that does not exist -ESRCH; getdomaininfo of itself field by field (flags with the
never-set shutdown code, pages against start_info and XENMEM, the shared_info frame, cpu time,
vCPUs, handle, pool), the search for the next id, reserved ids -EINVAL, copy back into a
read-only page -EFAULT; pausing itself -EINVAL; max_mem; max_vcpus; setdomainhandle;
getvcpuinfo; sysctl getdomaininfolist, physinfo (free pages as the frame allocator counts them:
they drop when the trace buffers take frames), sched_id, readconsole (the hypervisor's console
ring: partial, incremental, out-of-range index, clear, bad buffer). On ours each boot runs under
both ptwr= modes and must end by itself with a clean frame audit.
"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import guest_boot  # noqa: E402
import machine  # noqa: E402


def main():
    build, hv = guest_boot.arguments()
    modes = ["ptwr=emulate", "ptwr=writable"] if hv.name == "ours" else [""]
    for mode in modes:
        result = guest_boot.boot_guest(build, hv, "selftest=domctl", hv.poweroff, hypervisor_args=mode)
        guest_boot.expect_ended(result, hv, hv.poweroff, 0)
        checks = guest_boot.check_selftest(result, "domctl", 100)
        machine.expect("init exited: status 0" in result.serial, "init did not run after the selftest", result)
        machine.expect("*** hypervisor fault" not in result.serial, "the hypervisor faulted", result)
        where = f"{hv.name} {mode}".strip()
        print(f"ok: {where}: selftest=domctl, {checks} checks ({result.seconds:.1f} s)")


if __name__ == "__main__":
    main()
