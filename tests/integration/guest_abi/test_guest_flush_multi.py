"""The guest-directed flushes that name vCPUs (MMUEXT_TLB_FLUSH_MULTI, MMUEXT_INVLPG_MULTI,
update_va_mapping with UVMF_MULTI and UVMF_ALL), on ours under ptwr=emulate and ptwr=writable and
on Xen 4.17.

dom0 runs guest/selftest/memory/selftest_flush_multi.cpp: each flush removes a writable
translation left cached on purpose (a store through it must fault after the flush); on ours a
bitmap that names no vCPU of the domain (none, or only vCPU 63) must leave it cached, and every
control (the translation was really cached) must hold. The bad input gets Xen 4.17's answers:
-EINVAL for an unreadable mmuext_op bitmap, -EFAULT for update_va_mapping's (its update made all
the same), a refused update's -EBUSY whatever the bitmap, and a flush type of 3 doing the update
and no flush. The boot ends with a clean frame audit on ours.
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
        result = guest_boot.boot_guest(build, hv, "selftest=flush-multi", hv.poweroff,
                                       hypervisor_args=mode, timeout=120)
        guest_boot.expect_ended(result, hv, hv.poweroff, 0)
        checks = guest_boot.selftest_lines(result, "flush-multi")
        guest_boot.check_selftest(result, "flush-multi", 1)
        machine.expect(sum("a store through it now faults: ok" in l for l in checks) == 6,
                       "not every flush was checked", result)
        machine.expect("*** hypervisor fault" not in result.serial, "the hypervisor faulted", result)
        if hv.name == "ours":
            machine.expect(sum("control: the writable translation is still cached: ok" in l for l in checks) == 8,
                           "a control did not hold", result)
            machine.expect(sum("nothing flushed: the translation is still cached: ok" in l for l in checks) == 2,
                           "a bitmap naming no vCPU flushed", result)
            machine.expect("frame audit: every count agrees with the page tables: ok" in result.serial,
                           "the audit did not run", result)
        where = f"{hv.name} {mode}".strip()
        print(f"ok: {where}: {len(checks)} flush-multi checks ({result.seconds:.1f} s)")


if __name__ == "__main__":
    main()
