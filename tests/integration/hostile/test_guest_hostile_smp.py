"""selftest=hostile-smp (guest/selftest/memory/selftest_hostile_smp.cpp) run by a four-vCPU dom0
at -smp 4, on ours (sched_smp=1, ptwr=emulate; the frame audit also runs after each race) and
on Xen 4.17 (dom0_max_vcpus=4), with the same checks: Xen 4.17's answers to the races are the
ones the selftest accepts. test_hostile_smp.py runs the same selftest from a domU beside dom0 in
every PTE mode (ours only: Xen 4.17 boots no domU from modules).
"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import guest_boot  # noqa: E402
import machine  # noqa: E402


def main():
    build, hv = guest_boot.arguments()
    args = "sched_smp=1 ptwr=emulate" if hv.name == "ours" else "dom0_max_vcpus=4"
    result = guest_boot.boot_guest(build, hv, "selftest=hostile-smp", hv.poweroff, smp=4, hypervisor_args=args,
                                   timeout=300)
    guest_boot.expect_ended(result, hv, hv.poweroff, 0)
    checks = guest_boot.check_selftest(result, "hostile-smp", 60)
    machine.expect("selftest hostile-smp: vCPUs: 4 " in result.serial, "dom0 did not have 4 vCPUs", result)
    machine.expect("init exited: status 0" in result.lines(), "init did not run after the selftest", result)
    if hv.name == "ours":
        machine.expect("frame audit: every count agrees with the page tables: ok" in result.serial,
                       "the audit did not run after the races", result)
    print(f"ok: {hv.name} -smp 4 {args}: selftest=hostile-smp in a 4-vCPU dom0, {checks} checks "
          f"({result.seconds:.1f} s)")


if __name__ == "__main__":
    main()
