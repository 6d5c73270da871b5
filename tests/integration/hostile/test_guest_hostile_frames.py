"""Guest frames the hypervisor writes, turned against it (issue 28;
guest/selftest/memory/selftest_hostile_frames.cpp).

On ours, in both ptwr= modes, a domU built at boot runs selftest=hostile-console-ring (its
console ring, read-only, pinned as L1 .. L4 and made its GDT, the console port notified after
each try: all -EINVAL, as on Xen where xenconsoled holds the ring writable) and
selftest=hostile-guest-frames (a registered vcpu_info cannot be pinned; the runstate and time
areas' frame can be, and the hypervisor's writes through the guest's read-only mapping are
dropped), while dom0 runs hostile-guest-frames too. No hypervisor fault, and the frame audit
stays clean when both are gone. On Xen 4.17, dom0 runs hostile-guest-frames: the
specification of the answers.
"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import guest_boot  # noqa: E402
import machine  # noqa: E402
from two_domains import boot_two  # noqa: E402

FRAMES_CHECKS = 17
RING_CHECKS = 14


def main():
    build, hv = guest_boot.arguments()
    if not hv.ends_itself:
        result = guest_boot.boot_guest(build, hv, "selftest=hostile-guest-frames", hv.poweroff)
        guest_boot.expect_ended(result, hv, hv.poweroff, 0)
        lines = guest_boot.check_selftest(result, "hostile-guest-frames", FRAMES_CHECKS)
        print(f"ok: hostile-guest-frames on {hv.name}, {lines} checks ({result.seconds:.1f} s)")
        return
    for mode in ("ptwr=emulate", "ptwr=writable"):
        result = boot_two(build, "selftest=hostile-guest-frames",
                          "selftest=hostile-console-ring+hostile-guest-frames", mode)
        machine.expect("*** hypervisor fault" not in result.serial, "the hypervisor faulted", result)
        dom0 = guest_boot.check_selftest(result, "hostile-guest-frames", FRAMES_CHECKS)
        ring = guest_boot.check_selftest(result, "hostile-console-ring", RING_CHECKS, prefix="(d1) ")
        domu = guest_boot.check_selftest(result, "hostile-guest-frames", FRAMES_CHECKS, prefix="(d1) ")
        print(f"ok: {mode}: the domU's console ring and registered frames got Xen's answers "
              f"({ring} + {domu} checks, dom0 {dom0}; audit clean; {result.seconds:.1f} s)")


if __name__ == "__main__":
    main()
