"""A domain's life as the toolstack drives it (issue 9, scope item 1: createdomain,
destroydomain, setvcpucontext / getvcpucontext, set_address_size, hypercall_init), on ours and
on Xen 4.17, from dom0 alone.

dom0 runs guest/selftest/control/selftest_lifecycle.cpp's selftest=lifecycle, whose expected values are
Xen 4.17's: bad createdomain requests (-EACCES, -EINVAL for HVM / HAP / unknown flags / no vCPUs
/ grant limits, -EOPNOTSUPP for a PV domain emulating a local APIC, -ESRCH for a cpupool that
does not exist), the id handed back, an id in use -EEXIST, a reserved id allocating the next
one; the new domain paused with its vCPU down and no memory; pause and unpause; -ENODATA from
getvcpucontext before a context; setvcpucontext's checks and, with memory given on its behalf, a
context set and read back; destroydomain of itself -EINVAL, of a domain that does not exist
-ESRCH; after destroy the domain is gone and physinfo's free pages and the domain count are back
at their baseline; then 10 create/destroy cycles (make test's short version of the 100-cycle
loop), the same; then Xen's is_dying rules on a domain destroyed while dom0 maps one of its
pages (dead but held): populate_physmap and increase_reservation do 0 extents, alloc_unbound
and bind_interdomain are -EINVAL, a pin on its behalf answers 0 and is dropped at once (unpin
-EINVAL), XENMEM_maximum_gpfn is 0; once dom0 unmaps the page the domain is gone with all its
memory, and a new domain with the same id is created and destroyed with no hypervisor fault. On ours every boot runs under both ptwr= modes, the frame audit is clean after
each destroy and at the end.
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
        result = guest_boot.boot_guest(build, hv, "selftest=lifecycle", hv.poweroff, hypervisor_args=mode)
        guest_boot.expect_ended(result, hv, hv.poweroff, 0)
        checks = guest_boot.check_selftest(result, "lifecycle", 80)
        machine.expect("init exited: status 0" in result.serial, "init did not run after the selftest", result)
        machine.expect("*** hypervisor fault" not in result.serial, "the hypervisor faulted", result)
        where = f"{hv.name} {mode}".strip()
        print(f"ok: {where}: selftest=lifecycle, {checks} checks ({result.seconds:.1f} s)")


if __name__ == "__main__":
    main()
