"""Conformance: the pv-ops page-table layer works on Xen 4.17 in every mode.

pte=batched queues entries and commits them with multicall(mmu_update); pte=direct writes L1
entries with plain stores that Xen traps and emulates. Both must boot to a clean init exit.
"""
import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import machine  # noqa: E402
from test_xen417_boot import POWEROFF, boot_guest  # noqa: E402


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--build", default=None)
    build = machine.build_dir(parser.parse_args().build)

    for mode in ("batched", "direct"):
        result = boot_guest(build, f"pte={mode}", POWEROFF)
        machine.expect(not result.timed_out, f"pte={mode}: boot timed out", result)
        for line in (f"pv: page-table updates by {mode}", "hello from init (pid 1)",
                     "init exited: status 0"):
            machine.expect(line in result.serial, f"pte={mode}: missing '{line}'", result)
        print(f"ok: pte={mode} ({result.seconds:.1f} s)")


if __name__ == "__main__":
    main()
