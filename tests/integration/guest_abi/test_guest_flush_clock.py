"""A stale writable translation of a new page table is impossible, with the TLB flush clock
(mm/tlb_flush_clock.h) skipping the type-change flushes it can: on ours under ptwr=emulate and
ptwr=writable, and on Xen 4.17.

dom0 runs guest/selftest/memory/selftest_flush_clock.cpp: three ways to leave a data frame's writable
translation in the TLB (mapping removed by mmu_update; by update_va_mapping with UVMF_INVLPG
while the frame is also mapped at an alias through a second link of its L1; the same with the
second link removed first, without a flush), then the frame pinned as an L1 and a writable
mapping of it stored through the old translation. The entry must never take effect. On ours
each case also checks that the cached translation was really there (the control) and that the
pin cost exactly one type-change flush; the boot ends with a clean frame audit.
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
        result = guest_boot.boot_guest(build, hv, "selftest=flush-clock", hv.poweroff,
                                       hypervisor_args=mode, timeout=120)
        guest_boot.expect_ended(result, hv, hv.poweroff, 0)
        checks = guest_boot.selftest_lines(result, "flush-clock")
        guest_boot.check_selftest(result, "flush-clock", 1)
        machine.expect(sum("the store never took effect: ok" in l for l in checks) == 3,
                       "not all three cases attacked", result)
        machine.expect("*** hypervisor fault" not in result.serial, "the hypervisor faulted", result)
        if hv.name == "ours":
            machine.expect(sum("control: the old writable translation is still cached" in l and l.endswith("ok")
                               for l in checks) == 3, "a control did not hold", result)
            machine.expect(sum("the type change flushed the TLB: ok" in l for l in checks) == 3,
                           "a pin did not flush", result)
            machine.expect("frame audit: every count agrees with the page tables: ok" in result.serial,
                           "the audit did not run", result)
        where = f"{hv.name} {mode}".strip()
        print(f"ok: {where}: {len(checks)} flush-clock checks ({result.seconds:.1f} s)")


if __name__ == "__main__":
    main()
