"""Conformance: with no page-fault handler registered, a fault crashes the domain.

selftest=fault clears the trap table (set_trap_table(NULL)) and touches an unmapped address.
The hypervisor has nowhere to bounce the #PF, so it must crash dom0; the kernel must not
print anything after the faulting access.
"""
import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import machine  # noqa: E402
from test_xen417_boot import boot_guest  # noqa: E402

CRASH = "Dom0 crashed"  # Xen 4.17: "Hardware Dom0 crashed: rebooting machine in 5 seconds."


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--build", default=None)
    build = machine.build_dir(parser.parse_args().build)

    result = boot_guest(build, "selftest=fault", CRASH)
    machine.expect(not result.timed_out, "boot timed out", result)
    machine.expect("selftest fault: removing every trap handler" in result.serial,
                   "the fault self-test did not start", result)
    machine.expect("still running after an unhandled page fault" not in result.serial,
                   "the kernel ran past the unhandled fault", result)
    machine.expect("selftest fault: passed" not in result.serial
                   and "selftest fault: failed" not in result.serial,
                   "the kernel finished the fault self-test", result)
    machine.expect(CRASH in result.serial, "Xen did not report a dom0 crash", result)
    print(f"ok: unhandled #PF crashed dom0 ({result.seconds:.1f} s)")


if __name__ == "__main__":
    main()
