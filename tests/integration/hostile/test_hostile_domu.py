"""The hostile-guest suite's CPU paths as an unprivileged domain beside a working dom0 (issue 8,
items 1, 2, 6, 7, 12: availability is the point).

The domU runs selftest=hostile-cpu and init=/hostile (see test_guest_hostile.py) while dom0
runs the fork test; under both ptwr= modes both must pass, the machine must end by itself with
dom0's poweroff and a clean audit, and the domU's long batches (set_trap_table, mmu_update,
multicall over 16 MiB of one frame) must have been preempted (continuations) while dom0 kept
its time slices. A second boot has the domU return through iret to cs = 0 with no trap table:
the #GP cannot be delivered, so the domU alone is crashed with a message and dom0 runs on.
"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import guest_boot  # noqa: E402
import machine  # noqa: E402
from two_domains import boot_two, counter  # noqa: E402


def check_lines(result, prefix, name):
    lines = [l for l in result.lines() if l.startswith(f"{prefix}{name}: ")]
    failures = [l for l in lines if ": FAIL" in l]
    machine.expect(not failures, "; ".join(failures), result)
    machine.expect(f"{prefix}{name}: passed" in result.serial, f"no '{prefix}{name}: passed'", result)


def main():
    build, _ = guest_boot.arguments()
    for mode in ("ptwr=emulate", "ptwr=writable"):
        result = boot_two(build, "init=/forktest", "selftest=hostile-cpu init=/hostile", mode, timeout=300)
        check_lines(result, "(d1) ", "selftest hostile-cpu")
        check_lines(result, "(d1) ", "hostile")
        machine.expect("forktest: passed" in result.lines(), "dom0's fork test did not pass", result)
        continuations = counter(result.serial, "hypercall_continuations")
        machine.expect(continuations > 0, "no hypercall was ever preempted", result)
        machine.expect(counter(result.serial, "sched_preempt") > 0, "no time slice ended", result)
        print(f"ok: {mode}: the hostile domU got Xen's answers beside a working dom0 "
              f"({continuations} continuations, {counter(result.serial, 'sched_preempt')} preemptions, "
              f"{result.seconds:.1f} s)")

    result = boot_two(build, "init=/forktest", "selftest=hostile-iret-crash", "",
                      domu_ending="Domain 1 crashed: reason crash")
    machine.expect("d1v0 unhandled exception 13" in result.serial, "no unhandled #GP message for d1", result)
    machine.expect("(d1) selftest hostile-iret-crash: still running" not in result.serial,
                   "the domU ran past the refused iret", result)
    machine.expect("forktest: passed" in result.lines(), "dom0 did not finish", result)
    print(f"ok: a refused iret frame with no trap table crashed the domU alone ({result.seconds:.1f} s)")


if __name__ == "__main__":
    main()
