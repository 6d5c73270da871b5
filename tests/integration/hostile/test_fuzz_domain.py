"""The fuzzing domain (guest/fuzz/, tests/fuzz/): a short, fixed-seed campaign per
ptwr= mode, as dom0 (auditing itself through the hypervisor's audit sysctl) and as domain 1
beside a dom0 that audits for it (fuzz_companion) and then runs its fork test. Each boot must
end by itself with no hypervisor fault, every audit clean (the fuzzer's, the companion's and
the hypervisor's at the end), the fuzzer's own checks clean (its address space, the kernel's
tables, the teardown), and dom0 finished its work (init exited: status 0).

The kinds that crash the hypervisor today are left out (tests/fuzz/known_failures); `make fuzz`
runs the long campaigns with nothing left out.

A fifth boot runs the destroy class alone as dom0 (domains created, fed, held and destroyed
while calls for them race the teardown's continuations; every id created again must own nothing
of the old domain). The other campaigns run the hv_frames class among the rest (the frames the
hypervisor writes for the fuzzer retyped between its writes: the console ring as domain 1).

A boot replays one operation alone and checks it is the operation the campaign ran
(generation depends on the seed and the operation number only: the replay promise). A last boot
runs the fuzzer as dom0 on Xen 4.17, the specification: there it must survive its own campaign
(every kind but port I/O, which on Xen reaches devices dom0 owns, the exit device included)
and boot on to init, which shows that what keeps it alive holds against Xen's answers too.
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

SEED = 0x7e57
OPERATIONS = 20000
AUDIT_EVERY = 5000
DESTROY_OPERATIONS = 400  # each builds and destroys a domain


SUMMARY = re.compile(r"fuzz: hv_frames: (\d+) retypings .* took, (\d+) checks .*; destroy: (\d+) domains created, "
                     r"(\d+) destroyed, (\d+) calls racing a destroy, (\d+) calls for destroyed domains, (\d+) ids")


def expect_passed(outcome, operations=OPERATIONS, audit_every=AUDIT_EVERY):
    chunk = outcome.chunk
    name = f"{chunk.role} ptwr={chunk.mode}"
    boot = machine.Boot(outcome.serial, outcome.exit_status, outcome.timed_out, outcome.seconds)
    machine.expect(not outcome.timed_out, f"{name}: the machine did not end by itself", boot)
    machine.expect(fuzz_boot.FAULT not in outcome.serial, f"{name}: hypervisor fault", boot)
    machine.expect(outcome.passed, f"{name}: " + "; ".join(f"{k}: {d}" for k, d in outcome.failures), boot)
    machine.expect(outcome.ops_ran == operations, f"{name}: {outcome.ops_ran} operations ran", boot)
    machine.expect(outcome.audits >= operations // audit_every, f"{name}: only {outcome.audits} audits", boot)
    # The new classes reached what they aim at (not left out by known_failures).
    summary = SUMMARY.search(fuzz_boot.rejoin(outcome.serial))
    machine.expect(summary is not None, f"{name}: no summary of the hv_frames and destroy classes", boot)
    typed, checks, created, destroyed, racing, dead, again = (int(g) for g in summary.groups())
    if chunk.role == "destroy":
        busy = created >= operations // 2 and destroyed >= operations // 2 and racing > 0 and dead > 0 and again > 0
        machine.expect(busy, f"{name}: the destroy class did little: {summary.group(0)}", boot)
    elif "hv_frames" not in chunk.skip:
        machine.expect(typed > 0 and checks > 0, f"{name}: no frame the hypervisor writes was retyped", boot)
    machine.expect("forktest: passed" in outcome.serial, f"{name}: dom0's fork test did not pass", boot)
    if chunk.role == "domU":
        machine.expect("fuzz-companion: result: passed" in outcome.serial, f"{name}: the companion failed", boot)
    print(f"ok: {name}: {outcome.ops_ran} operations, {outcome.audits} audits, no fault, audits clean, "
          f"dom0 finished ({outcome.seconds:.1f} s)")


def description(serial, op):
    """The lines fuzz_log printed for operation `op` (a domU's without its prefix)."""
    lines = [line[5:] if line.startswith("(d1) ") else line for line in fuzz_boot.rejoin(serial).splitlines()]
    for i, line in enumerate(lines):
        if re.search(rf"fuzz: op {op}: (?!done)", line):
            text = [line[line.find("fuzz: op"):]]
            for more in lines[i + 1:]:
                if not more.startswith("  "):
                    break
                text.append(more)
            return "\n".join(text)
    return None


def main():
    build, _ = guest_boot.arguments()
    skip = fuzz_boot.known_failures()
    print(f"campaigns of {OPERATIONS} operations, seed {SEED:#x}, leaving out {skip or 'nothing'}")
    logged = None
    for role in ("dom0", "domU"):
        for mode in ("emulate", "writable"):
            chunk = fuzz_boot.Chunk(role, mode, SEED, 0, OPERATIONS, AUDIT_EVERY, 5000, skip,
                                    log="12000-12003" if (role, mode) == ("dom0", "emulate") else "")
            outcome = fuzz_boot.run(build, chunk, timeout=120)
            expect_passed(outcome)
            if chunk.log:
                logged = outcome.serial
    destroy = fuzz_boot.Chunk("destroy", "emulate", SEED, 0, DESTROY_OPERATIONS, 100, 100, skip)
    if "destroy" not in skip:
        expect_passed(fuzz_boot.run(build, destroy, timeout=120), DESTROY_OPERATIONS, 100)

    alone = fuzz_boot.Chunk("dom0", "emulate", SEED, 12002, 1, AUDIT_EVERY, 1000, skip, log="12002")
    outcome = fuzz_boot.run(build, alone, timeout=120)
    boot = machine.Boot(outcome.serial, outcome.exit_status, outcome.timed_out, outcome.seconds)
    machine.expect(outcome.passed, "the replayed operation: " + "; ".join(f"{k}: {d}" for k, d in outcome.failures), boot)
    first, again = description(logged, 12002), description(outcome.serial, 12002)
    machine.expect(first is not None and first == again,
                   f"operation 12002 replayed differently:\n{first}\n---\n{again}", boot)
    print(f"ok: operation 12002 replays alone as it ran in the campaign ({first.splitlines()[0]})")

    xen = guest_boot.hypervisor(build, "xen417")
    if os.path.exists(xen.image):
        result = guest_boot.boot_guest(build, xen, f"fuzz={SEED:#x} fuzz_ops={OPERATIONS} fuzz_progress=5000 fuzz_skip=ports "
                                       "init=/hello", "init exited", timeout=240)
        machine.expect(not result.timed_out, "xen417: the fuzzer's boot did not end in time", result)
        machine.expect("fuzz: result: passed" in result.serial, "xen417: the fuzzer did not pass", result)
        machine.expect("init exited: status 0" in result.serial, "xen417: dom0 did not run on to init", result)
        print(f"ok: xen417: the fuzzer ran {OPERATIONS} operations as dom0 on Xen 4.17 and booted on ({result.seconds:.1f} s)")


if __name__ == "__main__":
    main()
