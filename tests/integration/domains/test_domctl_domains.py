"""The control hypercalls with two domains (issue 9, scope item 1): dom0 controls the domain
built at boot, and that domU is refused every control operation. Ours only: Xen 4.17 builds no
domU at boot on x86 (its single-domain answers are checked by test_guest_domctl.py).

dom0 runs selftest=domctl-domu (guest/selftest/control/selftest_domctl.cpp): getdomaininfo and
getdomaininfolist of both domains with the right flags, max_vcpus (only the created count),
getvcpuinfo, setdomainhandle and max_mem of the domU; pausing it, nested and up to Xen's 255
(then -EOVERFLOW), so that its cpu time stands still while paused and grows again once
unpaused; then waits for it to shut down, sees that in getdomaininfo, and reads the console
ring: full and wrapped around, ending with the domU's lines and the hypervisor's report of its
shutdown. The domU runs selftest=domctl-unprivileged: every domctl and sysctl is -EPERM after
the interface-version check (-EACCES), a domain that does not exist -ESRCH first (do_domctl
looks it up before the XSM check); it prints 20 KiB of lines (more than the ring holds), then
runs the fork test. Both ptwr= modes; the machine ends by itself with a clean
frame audit.

A last boot has dom0 leave the domU paused (selftest=domctl-leave-paused) and power off: the
machine must still end (nothing is left that could unpause it), not idle forever.
"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import guest_boot  # noqa: E402
import machine  # noqa: E402
from two_domains import boot_two  # noqa: E402


def main():
    build = machine.build_dir(sys.argv[2] if len(sys.argv) > 2 and sys.argv[1] == "--build" else None)
    for mode in ("ptwr=emulate", "ptwr=writable"):
        result = boot_two(build, "selftest=domctl-domu", "selftest=domctl-unprivileged init=/forktest", mode)
        dom0_checks = guest_boot.check_selftest(result, "domctl-domu", 40)
        domu_checks = guest_boot.check_selftest(result, "domctl-unprivileged", 20, prefix="(d1) ")
        machine.expect("(d1) forktest: passed" in result.lines(), "the domU's fork test did not pass", result)
        machine.expect("init exited: status 0" in result.lines(), "dom0 did not run to its end", result)
        print(f"ok: {mode}: dom0 controlled domain 1 ({dom0_checks} checks), domain 1 was refused "
              f"({domu_checks} checks), audit clean ({result.seconds:.1f} s)")

    result = boot_two(build, "selftest=domctl-leave-paused", "init=/forktest", "",
                      domu_ending="Domain 1 is paused and no control domain is left to unpause it", timeout=120)
    guest_boot.check_selftest(result, "domctl-leave-paused", 2)
    machine.expect("(d1) forktest: passed" not in result.lines(), "the paused domU ran to its end", result)
    print(f"ok: a domU left paused by dom0 did not keep the machine alive ({result.seconds:.1f} s)")


if __name__ == "__main__":
    main()
