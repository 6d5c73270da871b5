"""With no page-fault handler registered, a fault crashes the domain, and the hypervisor
keeps running and says so.

selftest=fault clears the trap table (set_trap_table(NULL)) and touches an unmapped address.
The hypervisor has nowhere to bounce the #PF, so it must crash dom0; the kernel must not
print anything after the faulting access.
"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import guest_boot  # noqa: E402
import machine  # noqa: E402


def main():
    build, hv = guest_boot.arguments()
    result = guest_boot.boot_guest(build, hv, "selftest=fault", hv.crash)
    guest_boot.expect_ended(result, hv, hv.crash, 3)  # SHUTDOWN_crash
    machine.expect("selftest fault: removing every trap handler" in result.serial,
                   "the fault self-test did not start", result)
    machine.expect("still running after an unhandled page fault" not in result.serial,
                   "the kernel ran past the unhandled fault", result)
    machine.expect("selftest fault: passed" not in result.serial
                   and "selftest fault: failed" not in result.serial,
                   "the kernel finished the fault self-test", result)
    if hv.name == "ours":
        machine.expect("d0v0 unhandled exception 14" in result.serial, "no unhandled-fault message", result)
        machine.expect("hypervisor still running after the crash of domain 0" in result.serial,
                       "the hypervisor did not report that it kept running", result)
    print(f"ok: unhandled #PF crashed dom0 on {hv.name} ({result.seconds:.1f} s)")


if __name__ == "__main__":
    main()
