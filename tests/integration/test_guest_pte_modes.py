"""The pv-ops page-table layer works in every mode the hypervisor supports.

pte=batched queues entries and commits them with multicall(mmu_update); pte=direct writes L1
entries with plain stores that the hypervisor traps and emulates. Both must boot to a clean
init exit.
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import guest_boot  # noqa: E402
import machine  # noqa: E402


def main():
    build, hv = guest_boot.arguments()
    # Direct writes need the hypervisor to emulate or unhook page-table writes: Xen does;
    # ours gets those paths with the PTE-write milestone, and until then only batches.
    modes = ("batched", "direct") if hv.name == "xen417" else ("batched",)
    for mode in modes:
        result = guest_boot.boot_guest(build, hv, f"pte={mode}", hv.poweroff)
        guest_boot.expect_ended(result, hv, hv.poweroff, 0)
        for line in (f"pv: page-table updates by {mode}", "hello from init (pid 1)",
                     "init exited: status 0"):
            machine.expect(line in result.serial, f"pte={mode}: missing '{line}'", result)
        print(f"ok: pte={mode} on {hv.name} ({result.seconds:.1f} s)")


if __name__ == "__main__":
    main()
