"""destroydomain of a domain that runs (issue 9, scope item 1), and a domU refused the whole
lifecycle. Ours only: Xen 4.17 builds no domU at boot on x86.

dom0 runs selftest=lifecycle-domu (guest/selftest/control/selftest_lifecycle.cpp): it lets the boot
domain 1 run its selftest and then the fork test, and destroys it in the middle of that, with
its page tables validated and pinned, its event channels bound, its timers set and, under
ptwr=writable, its writable-pagetable slots in use, while dom0 maps one of its frames (its
shared_info page, foreigndom 1): the domain stays, dead (XEN_DOMINF_dying, one frame left),
until dom0 unmaps it. Then it is gone from getdomaininfo, the domain count drops by one, the frames physinfo finds back are the ones the hypervisor says it
gave back ("Domain 1 destroyed"), and the frame audit is clean then and at the end. A timer dom0
sets just before makes the teardown stop part way and be continued (-ERESTART's way here). The domU
runs selftest=evtchn-fifo first (so it is destroyed with its FIFO control block and event
array frames held by the hypervisor, which must give them back with the rest), then
selftest=lifecycle-unprivileged: createdomain, destroydomain, set/getvcpucontext,
hypercall_init and set_address_size are -EPERM (-EACCES for a stale interface version first,
-ESRCH for a domain that does not exist). Both ptwr= modes.
"""
import os
import re
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import guest_boot  # noqa: E402
import machine  # noqa: E402
from two_domains import boot_two, counter  # noqa: E402


# Virtual time from the instruction count: the timer dom0 sets before destroydomain then fires
# part way through the teardown however busy the host is (with host time a loaded machine let
# the 14 ms teardown finish before QEMU raised the interrupt).
DETERMINISTIC = ("-icount", "shift=0")


def main():
    build = machine.build_dir(sys.argv[2] if len(sys.argv) > 2 and sys.argv[1] == "--build" else None)
    for mode in ("ptwr=emulate", "ptwr=writable"):
        # pte=direct: the domU writes its page tables directly, so under ptwr=writable its
        # writable-pagetable slots are in use when it is destroyed.
        result = boot_two(build, "selftest=lifecycle-domu", "selftest=evtchn-fifo+lifecycle-unprivileged pte=direct init=/forktest",
                          mode, domu_ending="Domain 1 destroyed", extra=DETERMINISTIC)
        dom0_checks = guest_boot.check_selftest(result, "lifecycle-domu", 8)
        domu_checks = guest_boot.check_selftest(result, "lifecycle-unprivileged", 8, prefix="(d1) ")
        guest_boot.check_selftest(result, "evtchn-fifo", 60, prefix="(d1) ")
        destroyed = re.search(r"Domain 1 destroyed: (\d+) frames back to the allocator", result.serial)
        machine.expect(destroyed is not None, "no count of the frames given back", result)
        seen = re.search(r"selftest lifecycle-domu: frames back: (\d+)", result.serial)
        machine.expect(seen is not None, "dom0 did not report the frames it saw come back", result)
        machine.expect(int(seen.group(1)) == int(destroyed.group(1)),
                       f"physinfo saw {seen.group(1)} frames back, the hypervisor gave back {destroyed.group(1)}",
                       result)
        continuations = counter(result.serial, "hypercall_continuations")
        machine.expect(continuations > 0, "destroydomain was never continued (a timer was due during it)", result)
        machine.expect("Domain 1 shut down" not in result.serial, "the destroyed domain was reported shut down", result)
        machine.expect("(d1) forktest: passed" not in result.lines(), "domain 1 ran to its end", result)
        print(f"ok: {mode}: dom0 destroyed the running domain 1 ({dom0_checks} checks, {destroyed.group(1)} frames "
              f"back), domain 1 was refused ({domu_checks} checks), audit clean ({result.seconds:.1f} s)")


if __name__ == "__main__":
    main()
