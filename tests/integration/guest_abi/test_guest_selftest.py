"""The guest's ABI self-tests pass on ours and on real Xen 4.17 (whose results they encode).

selftest=hypercall: bad hypercall numbers, sub-ops and pointers (-ENOSYS / -EFAULT).
selftest=mmu: page-type rules of mmu_update and mmuext_op (writable mappings of page
tables, reserved address bits, superpages, foreign and hypervisor frames, pinning).
selftest=tbuf: the trace buffers through XEN_SYSCTL_tbuf_op as dom0's tools use them: the
one-shot size, t_info and the ring mapped with foreigndom DOMID_XEN, VIRQ_TBUF at half full,
lost records counted in TRC_LOST_RECORDS, nothing recorded on a CPU outside set_cpu_mask's mask,
nothing recorded while disabled.
The expected values in guest/selftest/*/selftest_*.cpp are what Xen 4.17 returns.
"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import machine  # noqa: E402
import guest_boot  # noqa: E402


def main():
    build, hv = guest_boot.arguments()

    for name in ("hypercall", "mmu", "tbuf"):
        result = guest_boot.boot_guest(build, hv, f"selftest={name}", hv.poweroff)
        guest_boot.expect_ended(result, hv, hv.poweroff, 0)
        checks = guest_boot.check_selftest(result, name, 8)
        machine.expect("init exited: status 0" in result.serial,
                       f"selftest={name}: init did not run afterwards", result)
        print(f"ok: selftest={name}, {checks} checks ({result.seconds:.1f} s)")


if __name__ == "__main__":
    main()
