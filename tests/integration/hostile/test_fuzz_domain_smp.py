"""The fuzzing domain on four vCPUs (issue 30, item 9; guest/fuzz/fuzz_smp.cpp): a short,
fixed-seed campaign per ptwr= mode as dom0 at -smp 4 with sched_smp=1 under -icount shift=0.
vCPU 0 runs the campaign's own stream; vCPUs 1-3 run mmu_update / mmuext_op streams of their
own on the same scratch tables and frames at the same time (pins, unpins, relinks and base
switches racing vCPU 0's direct stores and each other), and all four meet at a barrier every
AUDIT_EVERY operations, where the frame audit and the fuzzer's checks of its address space run.

Each boot must end by itself with no hypervisor fault, every audit clean, the fuzzer's own
checks clean, every answer the hypervisor gave the other vCPUs one of Xen's (0 or a Xen error
code), every vCPU at every barrier, and dom0 finished its work. The other vCPUs must have run
all their operations, some of which took effect (the races happened).

Under -icount the machine is deterministic: the first campaign runs twice and the other vCPUs'
answers must be the same both times (a failure replays with the command printed).
"""
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "lib"))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(HERE)), "fuzz"))
import fuzz_boot  # noqa: E402
import guest_boot  # noqa: E402
import machine  # noqa: E402

SEED = 0x5e57
VCPUS = 4
OPERATIONS = 5000
AUDIT_EVERY = 1000
ANSWERS = re.compile(r"fuzz: smp answers: (.*)")


def answers(outcome):
    found = ANSWERS.search(fuzz_boot.rejoin(outcome.serial))
    return dict(pair.split(":") for pair in found.group(1).split()) if found else None


def expect_passed(outcome):
    chunk = outcome.chunk
    name = f"{VCPUS} vCPUs ptwr={chunk.mode}"
    boot = machine.Boot(outcome.serial, outcome.exit_status, outcome.timed_out, outcome.seconds)
    machine.expect(not outcome.timed_out, f"{name}: the machine did not end by itself", boot)
    machine.expect(fuzz_boot.FAULT not in outcome.serial, f"{name}: hypervisor fault", boot)
    machine.expect(outcome.passed, f"{name}: " + "; ".join(f"{k}: {d}" for k, d in outcome.failures)
                   + f" (replay: {chunk.command()})", boot)
    machine.expect(outcome.ops_ran == OPERATIONS, f"{name}: {outcome.ops_ran} operations ran on vCPU 0", boot)
    machine.expect(outcome.audits >= OPERATIONS // AUDIT_EVERY, f"{name}: only {outcome.audits} audits", boot)
    machine.expect(outcome.racer_ops + outcome.racer_skipped == (VCPUS - 1) * OPERATIONS,
                   f"{name}: the other vCPUs ran {outcome.racer_ops} operations ({outcome.racer_skipped} skipped)", boot)
    counts = answers(outcome)
    machine.expect(counts is not None and int(counts.get("0", 0)) > 0,
                   f"{name}: none of the other vCPUs' operations took effect ({counts})", boot)
    machine.expect("Scheduling guests on 4 CPUs" in outcome.serial, f"{name}: the vCPUs did not run on 4 CPUs", boot)
    machine.expect("forktest: passed" in outcome.serial, f"{name}: dom0's fork test did not pass", boot)
    print(f"ok: {name}: {outcome.ops_ran} operations on vCPU 0 and {outcome.racer_ops} on vCPUs 1-{VCPUS - 1}, "
          f"{outcome.audits} audits at barriers, no fault, audits and answers clean ({outcome.seconds:.1f} s)")
    return counts


def main():
    build, _ = guest_boot.arguments()
    skip = fuzz_boot.known_failures()
    print(f"campaigns of {OPERATIONS} operations per vCPU on {VCPUS} vCPUs, seed {SEED:#x}, "
          f"leaving out {skip or 'nothing'}")
    first = None
    for mode in ("emulate", "writable", "adaptive"):
        chunk = fuzz_boot.Chunk("dom0", mode, SEED, 0, OPERATIONS, AUDIT_EVERY, AUDIT_EVERY, skip, vcpus=VCPUS)
        counts = expect_passed(fuzz_boot.run(build, chunk, timeout=150))
        if first is None:
            first = (chunk, counts)
    chunk, counts = first
    again = fuzz_boot.run(build, chunk, timeout=150)
    boot = machine.Boot(again.serial, again.exit_status, again.timed_out, again.seconds)
    machine.expect(again.passed and answers(again) == counts,
                   f"the same campaign answered differently the second time:\n{counts}\n---\n{answers(again)}", boot)
    print(f"ok: ptwr={chunk.mode} again: the other vCPUs got the same answers ({again.seconds:.1f} s)")


if __name__ == "__main__":
    main()
