"""A user page fault outside every region kills the process, not the kernel, and kernel
memory is not reachable from user mode.

init=/segv runs a program that writes to an unmapped address: the kernel reports
"init: segmentation fault at 0xdead000", ends init with status 139 (killed by SIGSEGV) and
shuts the domain down with SHUTDOWN_crash.
"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import guest_boot  # noqa: E402
import machine  # noqa: E402


def main():
    build, hv = guest_boot.arguments()
    result = guest_boot.boot_guest(build, hv, "init=/segv", hv.crash)
    guest_boot.expect_ended(result, hv, hv.crash, 3)
    for line in ("segv: touching 0xdead000", "init: segmentation fault at 0xdead000",
                 "init exited: status 139"):
        machine.expect(line in result.serial, f"missing '{line}'", result)
    machine.expect("segv: still alive" not in result.serial, "the faulting write went on", result)
    machine.expect("kernel panic" not in result.serial, "the kernel panicked", result)
    print(f"ok: user segfault handled on {hv.name} ({result.seconds:.1f} s)")

    # Isolation: the user L4 holds no kernel entries, so reading the kernel image faults.
    result = guest_boot.boot_guest(build, hv, "init=/kread", hv.crash)
    guest_boot.expect_ended(result, hv, hv.crash, 3)
    for line in ("kread: reading kernel memory", "init: segmentation fault at 0xffffffff80000000",
                 "init exited: status 139"):
        machine.expect(line in result.serial, f"kread: missing '{line}'", result)
    machine.expect("is reachable from user mode" not in result.serial,
                   "user mode read kernel memory", result)
    print(f"ok: kernel memory unreachable from user mode on {hv.name} ({result.seconds:.1f} s)")


if __name__ == "__main__":
    main()
