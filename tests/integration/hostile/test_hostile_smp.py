"""The hostile SMP suite (issue 30, item 8): a domU with four vCPUs races its own vCPUs against
each other beside a working dom0 (the fork test), at -smp 4 (guest/selftest/memory/
selftest_hostile_smp.cpp, selftest=hostile-smp):

- pin-race: an L1 pinned, unpinned, linked into and unlinked from a pinned L2 by one vCPU while
  another mmu_updates its entries, a third maps it writable in itself and vCPU 0 stores into it
  directly;
- free-race: a frame populated and given back (decrease_reservation) by one vCPU while another
  maps it with update_va_mapping and mmu_update;
- shared-l1: two and three vCPUs writing one L1 at once (direct stores emulated, mmu_update);
- stale-tlb: a writable translation kept by one vCPU while another removes the mapping without
  a flush and pins the frame as an L1: the store through it faults (or, where the domain
  detaches tables, lands in the detached table and is refused at its reattach);
- detach-race: one vCPU stores good and bad entries into a pinned L1 nothing links while another
  makes MMU hypercalls (detaches and reattaches under ptwr=writable / adaptive): the bad ones
  are refused, the good ones kept;
- evtchn-race: bind_ipi / close racing EVTCHNOP_send, then an IPI flood against a working vCPU.

Every answer is checked against Xen 4.17's (the selftest fails on any other); the domU powers
off after it, dom0's fork test passes, the machine ends by itself with a clean frame audit.
Here under sched_smp=1 with ptwr=emulate, and with sched_smp=0 (every vCPU multiplexed on
CPU 0); test_hostile_smp_ptwr.py runs it under sched_smp=1 with ptwr=writable and adaptive (a
domain on several CPUs detaches the tables no vCPU reaches, the inactive slot, and emulates the
others: docs/architecture.md, "The PV MMU on several CPUs"; the domU is told so, and the
hypervisor's count of its detaches must be above 0).
"""
import os
import re
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import guest_boot  # noqa: E402
import machine  # noqa: E402
from two_domains import boot_two  # noqa: E402

RUNS = ("sched_smp=1 ptwr=emulate", "sched_smp=0 ptwr=emulate")


def run(runs):
    build, _ = guest_boot.arguments()
    for args in runs:
        # ours detaches the domU's unreachable tables here: its selftest accepts a bad store
        # that lands in a detached table, refused at the reattach (and checks that it is).
        detaches = "sched_smp=1" in args and "ptwr=emulate" not in args
        domu = "selftest=hostile-smp" + (" hostile_smp_detaches" if detaches else "")
        result = boot_two(build, "init=/forktest", domu, f"domU_max_vcpus=4 {args}", smp=4, timeout=300)
        checks = guest_boot.check_selftest(result, "hostile-smp", 60, prefix="(d1) ")
        machine.expect("forktest: passed" in result.lines(), "dom0's fork test did not pass", result)
        machine.expect("*** hypervisor fault" not in result.serial, "the hypervisor faulted", result)
        machine.expect("(d1) selftest hostile-smp: vCPUs: 4 " in result.serial, "the domU did not have 4 vCPUs",
                       result)
        ran = re.findall(r"Domain 1 vCPUs ran on:(.*)", result.serial)
        if args.startswith("sched_smp=1"):
            machine.expect(ran, "no 'Domain 1 vCPUs ran on' line", result)
        else:
            machine.expect(not ran, "sched_smp=0 ran guests on the APs", result)
        counts = ""
        if detaches:
            found = re.search(r"Domain 1 writable pagetables on several CPUs: (\d+) detaches, (\d+) flush calls",
                              result.serial)
            machine.expect(found, "no count of the domU's detaches", result)
            machine.expect(int(found.group(1)) > 0, "the 4-vCPU domU detached no table", result)
            counts = f", {found.group(1)} detaches, {found.group(2)} flush calls"
        print(f"ok: -smp 4 {args}: selftest=hostile-smp in a 4-vCPU domU, {checks} checks, dom0 finished, "
              f"audit clean{' (ran on' + ran[0] + ')' if ran else ''}{counts} ({result.seconds:.1f} s)")


if __name__ == "__main__":
    run(RUNS)
