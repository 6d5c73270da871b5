"""Work across domains as dom0 alone can see it (issue 9, scope item 1: memory_op on behalf of
a domain, event channels between domains, remote shutdown, foreign page-table work), on ours
and on Xen 4.17: what Xen 4.17 answers is the specification.

dom0 runs guest/selftest/control/selftest_xdom.cpp's selftest=xdom-self: populate_physmap and
decrease_reservation on itself (frames counted in current_reservation and physinfo's free
pages and back, the M2P entry of a populated frame, order 1, a frame given back while mapped
that leaves with its mapping, frames written and given back reading as zeros when populated
again (at once: zeroed when handed out; after an idle sleep: scrubbed while idle, which our
counters show; on ours only: Xen 4.17 scrubs only what a dying domain leaves), hostile extent
lists, too many extents, too large an order,
a frame beyond RAM: Xen's partial count, never a fault; the continuation's start extent),
the reservation queries' -EINVAL / -ESRCH, set_memory_map / memory_map (-ENOSYS before one is
set, read back, E820MAX, -ESRCH, -EFAULT), event channels within dom0 (alloc_unbound for
DOMID_SELF, bind_interdomain to it, pending at once, send both ways, status of both ends,
close leaving the other end unbound, closed and VIRQ ports -EINVAL, no such domain -ESRCH,
ports counted before and after; ports existing only in Xen's buckets of 64, a new bucket when
every port is taken, kept when its ports close), SCHEDOP_remote_shutdown and foreign mmu_update / mmuext_op
naming a domain that does not exist (-ESRCH). On ours each boot runs under both ptwr= modes and
must end by itself with a clean frame audit.
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
        result = guest_boot.boot_guest(build, hv, "selftest=xdom-self", hv.poweroff, hypervisor_args=mode)
        guest_boot.expect_ended(result, hv, hv.poweroff, 0)
        checks = guest_boot.check_selftest(result, "xdom-self", 80)
        machine.expect("init exited: status 0" in result.serial, "init did not run after the selftest", result)
        machine.expect("*** hypervisor fault" not in result.serial, "the hypervisor faulted", result)
        where = f"{hv.name} {mode}".strip()
        print(f"ok: {where}: selftest=xdom-self, {checks} checks ({result.seconds:.1f} s)")


if __name__ == "__main__":
    main()
