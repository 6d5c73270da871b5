"""Work across domains with two domains (issue 9, scope items 1 and 6), ours only: Xen 4.17
builds no domU at boot (dom0 alone runs the parts Xen can check, test_guest_xdom.py).

dom0 runs selftest=xdom-domu (guest/selftest/control/selftest_xdom.cpp) beside the domain built at boot
as domain 1: populate_physmap for it beyond its max_mem (Xen's partial count 0), within a
raised max_mem (the partial count where it ends), order 1, 2048 extents (preemptible), a frame
given back while dom0 maps it with foreigndom, frames it does not own refused; the builder's
page-table work in its memory (mmu_update with pt_dom, pin / unpin on its behalf, a bad table
and a foreign frame refused, MMU_MACHPHYS_UPDATE); an event channel allocated in domain 1 for
dom0, bound by dom0, events delivered both ways, closed by dom0 (the domU's end unbound again);
free frames and both domains' ports counted before and after; at last SCHEDOP_remote_shutdown
of domain 1 and VIRQ_DOM_EXC on dom0's port.

Domain 1 runs selftest=xdom-peer+xdom-wait: every cross-domain call on dom0 refused as Xen
refuses it, the event exchange, then its console ring (start_info->console.domU, which all
its output goes through) with garbage indexes: the hypervisor reports and skips them, and the
domU's next lines still arrive; then it waits for dom0 to shut it down. Both ptwr= modes; the
machine ends by itself with a clean frame audit.
"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import guest_boot  # noqa: E402
import machine  # noqa: E402
from two_domains import boot_two  # noqa: E402

INCONSISTENT = "d1: console ring indexes inconsistent"


def main():
    build = machine.build_dir(sys.argv[2] if len(sys.argv) > 2 and sys.argv[1] == "--build" else None)
    for mode in ("ptwr=emulate", "ptwr=writable"):
        result = boot_two(build, "selftest=xdom-domu", "selftest=xdom-peer+xdom-wait", mode)
        dom0_checks = guest_boot.check_selftest(result, "xdom-domu", 60)
        domu_checks = guest_boot.check_selftest(result, "xdom-peer", 20, prefix="(d1) ")
        lines = result.lines()
        garbage = [i for i, l in enumerate(lines) if INCONSISTENT in l]
        machine.expect(len(garbage) >= 2, "the hypervisor did not report the domU's garbage ring indexes", result)
        after = [l for l in lines[garbage[-1]:] if l.startswith("(d1) selftest xdom-peer: passed")]
        machine.expect(after, "the domU's console did not go on after the garbage", result)
        machine.expect("(d1) selftest xdom-wait: waiting for dom0 to shut this domain down: 0 (0x0)" in lines,
                       "the domU did not wait for dom0", result)
        machine.expect("init exited: status 0" in lines, "dom0 did not run to its end", result)
        print(f"ok: {mode}: dom0 worked on domain 1 ({dom0_checks} checks), domain 1 was refused and "
              f"answered ({domu_checks} checks), its console survived garbage, audit clean ({result.seconds:.1f} s)")


if __name__ == "__main__":
    main()
