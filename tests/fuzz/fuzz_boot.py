"""One boot of the fuzzing domain (guest/fuzz/) and what it says.

A boot runs operations start..start+ops-1 of a seed, either as dom0 (the fuzzer audits itself
through the hypervisor's private sysctl) or as domain 1 beside a dom0 that audits for it
(fuzz_companion) and then runs its own work (init=/forktest). The role "destroy" is dom0 running
the destroy class only (fuzz_only=destroy): domains created, fed and destroyed while calls for
them race the teardown's continuations. --vcpus N (dom0) runs the fuzzer on N vCPUs
(fuzz_vcpus=N) at -smp N with sched_smp=1 under -icount shift=0. The machine must end by itself;
a hypervisor fault ends the boot at once (the panic halts the machine), a hang by timeout.

    python3 tests/fuzz/fuzz_boot.py --role domU --mode writable --seed 7 --start 200000 --ops 1000 \
        [--log 200500-200600] [--skip nt+iret_selectors] [--locate]

replays one chunk (--log describes those operations before they run; --locate finds the
operation a failure happened in by replaying the chunk up to it with the log on).
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
HYPERVISOR_ARGS = "loglvl=info dom0_mem=64M domU_mem=64M"
FAULT = "*** hypervisor fault"


@dataclass
class Chunk:
    role: str            # "dom0", "domU" or "destroy" (dom0, fuzz_only=destroy)
    mode: str            # ptwr= mode: "emulate" or "writable"
    seed: int
    start: int
    ops: int
    audit_every: int = 10000
    progress: int = 10000
    skip: str = ""
    log: str = ""        # fuzz_log=<from>-<to>
    dom0_init: str = "/forktest"
    audit_from: int = 0
    extra: str = ""      # more fuzz_* words (fuzz_step_op=, fuzz_step_mask=...)
    vcpus: int = 1       # fuzz_vcpus=: >1 runs at -smp <vcpus>, sched_smp=1, -icount shift=0

    def qemu_extra(self):
        """Several vCPUs: as many CPUs, the vCPUs spread over them (sched_smp=1), and QEMU's
        CPUs run round robin by instruction count so the run is deterministic."""
        return ["-smp", str(self.vcpus), "-icount", "shift=0"] if self.vcpus > 1 else []

    def hypervisor_args(self):
        return HYPERVISOR_ARGS + f" ptwr={self.mode}" + (" sched_smp=1" if self.vcpus > 1 else "")

    def fuzzer_args(self):
        args = [f"fuzz={self.seed:#x}", f"fuzz_start={self.start}", f"fuzz_ops={self.ops}",
                f"fuzz_audit={self.audit_every}", f"fuzz_progress={self.progress}"]
        if self.skip:
            args.append(f"fuzz_skip={self.skip}")
        if self.log:
            args.append(f"fuzz_log={self.log}")
        if self.audit_from:
            args.append(f"fuzz_audit_from={self.audit_from}")
        if self.role == "destroy":
            args.append("fuzz_only=destroy")
        if self.vcpus > 1:
            args.append(f"fuzz_vcpus={self.vcpus}")
        if self.extra:
            args.append(self.extra)
        return " ".join(args)

    def modules(self, build):
        kernel = os.path.join(build, "guest", "kernel")
        initrd = os.path.join(build, "guest", "initrd.cpio")
        if self.role in ("dom0", "destroy"):
            return [(kernel, f"{self.fuzzer_args()} init={self.dom0_init}"), (initrd, "")]
        return [(kernel, f"fuzz_companion init={self.dom0_init}"), (initrd, ""),
                (kernel, f"{self.fuzzer_args()} init=/hello"), (initrd, "")]

    def alone(self, op):
        """Operation `op` alone, on a fresh pool (it may need the state before it to fail)."""
        return Chunk(self.role, self.mode, self.seed, op, 1, self.audit_every, self.progress, self.skip, str(op),
                     self.dom0_init, vcpus=self.vcpus)

    def command(self):
        """The command that replays this chunk."""
        parts = ["python3 tests/fuzz/fuzz_boot.py", f"--role {self.role}", f"--mode {self.mode}",
                 f"--seed {self.seed:#x}", f"--start {self.start}", f"--ops {self.ops}",
                 f"--audit {self.audit_every}", f"--progress {self.progress}"]
        if self.skip:
            parts.append(f"--skip {self.skip}")
        if self.log:
            parts.append(f"--log {self.log}")
        if self.audit_from:
            parts.append(f"--audit-from {self.audit_from}")
        if self.extra:
            parts.append(f"--extra '{self.extra}'")
        if self.vcpus > 1:
            parts.append(f"--vcpus {self.vcpus}")
        return " ".join(parts)


@dataclass
class Outcome:
    chunk: Chunk
    serial: str
    seconds: float
    timed_out: bool
    exit_status: object
    failures: list = field(default_factory=list)   # (kind, detail)
    ops_ran: int = 0
    last_op: int = -1       # the last operation a progress line reported (-1: none)
    audits: int = 0
    racer_ops: int = 0      # fuzz_vcpus: the operations vCPUs 1.. ran
    racer_skipped: int = 0  # ... and the batches they left out (writing a direct-map slot)

    @property
    def passed(self):
        return not self.failures

    def kinds(self):
        return sorted({kind for kind, _ in self.failures})


def known_failures():
    """The fuzz_skip= names of tests/fuzz/known_failures, joined with '+'."""
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "known_failures")
    names = []
    with open(path) as f:
        for line in f:
            word = line.split("#", 1)[0].strip()
            if word:
                names.append(word)
    return "+".join(names)


def timeout_for(chunk):
    """Generous: the operations themselves run at about 20,000 a second under TCG; the
    audits (every frame of the machine) and dom0's work come on top."""
    audits = chunk.ops // chunk.audit_every + 2 if chunk.audit_every else 2
    per_op = 1 / 50 if chunk.role == "destroy" else 1 / 2000  # a destroy operation builds a domain
    if chunk.vcpus > 1:  # every vCPU runs a stream, round robin on one host thread (-icount)
        per_op *= 2 * chunk.vcpus
    return 60 + chunk.ops * per_op + audits * 2 + (60 if chunk.role == "domU" else 30)


def run_qemu(build, chunk, timeout):
    hypervisor = os.path.join(build, "xen", "xen")
    with tempfile.TemporaryDirectory() as tmp:
        log = os.path.join(tmp, "serial.log")
        initrd = ",".join(f"{p} {a}".strip().replace(",", ",,") for p, a in chunk.modules(build))
        cmd = ["qemu-system-x86_64", "-accel", "tcg", "-cpu", "Westmere", "-m", "512M", "-display", "none",
               "-vga", "none", "-nic", "none", "-monitor", "none", "-serial", f"file:{log}", "-no-reboot",
               "-device", "isa-debug-exit,iobase=0xf4,iosize=4", "-kernel", hypervisor,
               "-append", chunk.hypervisor_args(), "-initrd", initrd, *chunk.qemu_extra()]
        start = time.monotonic()
        proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        timed_out, fault_seen = False, None
        while proc.poll() is None:
            now = time.monotonic()
            if now - start > timeout:
                timed_out = True
                break
            if fault_seen is None and os.path.exists(log) and FAULT.encode() in _read(log):
                fault_seen = now
            if fault_seen is not None and now - fault_seen > 2:  # the panic halts: take the dump and stop
                break
            time.sleep(0.2)
        if proc.poll() is None:
            proc.kill()
            proc.wait()
            status = None
        else:
            status = proc.returncode
        err = proc.stderr.read().decode(errors="replace")
        text = _read(log).decode(errors="replace") if os.path.exists(log) else ""
        if err.strip() and "terminating on signal" not in err:
            text += "\n[qemu stderr] " + err
        return text, status, timed_out and fault_seen is None, time.monotonic() - start


def _read(path):
    with open(path, "rb") as f:
        return f.read()


DONE = re.compile(r"fuzz: done seed 0x([0-9a-f]+) ops (\d+)-(\d+): (\d+) ran, (\d+) refused, (\d+) audits, "
                  r"(\d+) mismatches, (\d+) violations, (\d+) protected changes, (\d+) frames left typed")
PROGRESS = re.compile(r"fuzz: seed 0x[0-9a-f]+ op (\d+):")
AUDIT_BAD = re.compile(r"\(XEN\) audit: (\d+) frames disagree")
SMP = re.compile(r"fuzz: smp: (\d+) vCPUs, (\d+) operations on vCPUs 1-\d+ \((\d+) errors\), (\d+) wrong answers, "
                 r"(\d+) refused, (\d+) barriers missed, (\d+) skipped")
COMPANION = re.compile(r"fuzz-companion: domain 1 (finished|shut down|stopped making progress) at op (\d+): (\d+) audits, "
                       r"(\d+) mismatches, (\d+) canary words changed")


def rejoin(serial):
    """The hypervisor prints a domU's console a line at a time, and cuts a line longer than
    its 160-character buffer into full pieces: put them back together."""
    out, full_piece = [], False
    for line in serial.splitlines():
        if full_piece and line.startswith("(d1) "):
            out[-1] += line[5:]
        else:
            out.append(line)
        full_piece = line.startswith("(d1) ") and len(line) == 5 + 160
    return "\n".join(out)


def judge(chunk, serial, seconds, timed_out, exit_status):
    serial = rejoin(serial)
    out = Outcome(chunk, serial, seconds, timed_out, exit_status)
    fail = out.failures.append
    ended = "No domain left to run" in serial
    if FAULT in serial:
        detail = next((line for line in serial.splitlines() if "RIP:" in line), "")
        fail(("hypervisor fault", detail.strip()))
    elif timed_out:
        fail(("hang", f"no end after {seconds:.0f} s"))
    elif not ended:
        # QEMU ends with status 0 when the machine resets (-no-reboot): a triple fault.
        fail(("machine reset", f"the machine ended without the hypervisor's last words (QEMU status {exit_status})"))
    primary = bool(out.failures)
    for m in AUDIT_BAD.finditer(serial):
        fail(("audit mismatch", m.group(0)))
    progress = [int(m.group(1)) for m in PROGRESS.finditer(serial)]
    out.last_op = max(progress) if progress else -1
    done = DONE.search(serial)
    if done:
        ran, refused, audits, mismatches, violations, changes, left = (int(done.group(i)) for i in range(4, 11))
        out.ops_ran, out.audits = ran, audits
        if mismatches:
            fail(("audit mismatch", f"the fuzzer's audits found {mismatches} frames disagreeing"))
        if violations or changes:
            fail(("isolation check", f"{violations} violations of its own tables, {changes} protected entries changed"))
        if refused:
            fail(("fuzzer", f"{refused} operations refused by the rule check (a generator bug)"))
        if left:
            fail(("teardown", f"{left} scratch frames still typed after teardown"))
        if ran != chunk.ops:
            fail(("fuzzer", f"ran {ran} of {chunk.ops} operations"))
        if chunk.vcpus > 1:
            smp = SMP.search(serial)
            if not smp:
                fail(("smp", "no 'fuzz: smp:' line: the other vCPUs' streams did not report"))
            else:
                vcpus, racer_ops, _, wrong, refused, missed = (int(smp.group(i)) for i in range(1, 7))
                out.racer_ops = racer_ops
                out.racer_skipped = int(smp.group(7))
                if vcpus != chunk.vcpus:
                    fail(("smp", f"{vcpus} vCPUs ran streams, not {chunk.vcpus}"))
                if wrong:
                    fail(("wrong answer", f"{wrong} answers of the hypervisor that are not Xen's ({smp.group(0)})"))
                if refused:
                    fail(("fuzzer", f"{refused} operations of the other vCPUs refused by the rule check"))
                if missed:
                    fail(("hang", f"{missed} vCPUs did not reach a barrier"))
    elif not primary:
        crash = next((line for line in serial.splitlines() if "crashed" in line or "panic" in line), "no 'fuzz: done'")
        fail(("fuzzer died", crash.strip()))
    if primary:
        return out
    if chunk.role == "domU":
        companion = COMPANION.search(serial)
        if not companion:
            fail(("companion", "dom0's companion did not report"))
        else:
            out.audits = max(out.audits, int(companion.group(3)))
            if companion.group(1) != "finished":
                fail(("companion", companion.group(0)))
            if int(companion.group(4)):
                fail(("audit mismatch", companion.group(0)))
            if int(companion.group(5)):
                fail(("isolation check", companion.group(0)))
    dom0_lines = [line for line in serial.splitlines() if not line.startswith("(")]
    if "init exited: status 0" not in "\n".join(dom0_lines):
        fail(("dom0", "dom0 did not finish its work (init exited: status 0)"))
    audits = re.findall(r"\(XEN\) audit: (.*)", serial)
    if not audits or not audits[-1].startswith("clean"):
        fail(("audit mismatch", f"the final audit: {audits[-1] if audits else 'none'}"))
    if exit_status is None or exit_status != 1:
        fail(("end", f"QEMU exit status {exit_status} (expected 1: dom0 powered off)"))
    return out


def run(build, chunk, timeout=None):
    serial, status, timed_out, seconds = run_qemu(build, chunk, timeout or timeout_for(chunk))
    return judge(chunk, serial, seconds, timed_out, status)


OP_LINE = re.compile(r"fuzz: op (\d+): (.*)")


def locate(build, outcome):
    """Replays a failed chunk with the log on from the last reported progress: the last
    operation described before the failure is where it happened. Returns (op, text) or None."""
    chunk = outcome.chunk
    first = outcome.last_op + 1 if outcome.last_op >= chunk.start else chunk.start
    last = min(chunk.start + chunk.ops - 1, first + chunk.progress)
    replay = Chunk(chunk.role, chunk.mode, chunk.seed, chunk.start, last - chunk.start + 1, chunk.audit_every,
                   chunk.progress, chunk.skip, f"{first}-{last}", chunk.dom0_init, vcpus=chunk.vcpus)
    again = run(build, replay)
    lines = again.serial.splitlines()
    begun = [i for i, line in enumerate(lines) if OP_LINE.search(line) and not line.rstrip().endswith(": done")]
    if not begun:
        return None, replay, again
    index = begun[-1]
    number = int(OP_LINE.search(lines[index]).group(1))
    done = any(re.search(rf"fuzz: op {number}: done", line) for line in lines[index:])
    if done and not again.failures:
        return None, replay, again
    text = [lines[index][lines[index].find("fuzz: op"):]]
    for line in lines[index + 1:]:
        if not line.startswith("  ") and not line.startswith("(d1)   "):
            break
        text.append(line[5:] if line.startswith("(d1) ") else line)
    # The same state: the chunk up to this operation; and the operation alone, on a fresh pool.
    replay.ops, replay.log = number - chunk.start + 1, str(number)
    return (number, "\n".join(text)), replay, again


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--build", default=os.path.join(ROOT, "build"))
    parser.add_argument("--role", choices=["dom0", "domU", "destroy"], default="dom0")
    parser.add_argument("--mode", choices=["emulate", "writable"], default="emulate")
    parser.add_argument("--seed", type=lambda s: int(s, 0), default=1)
    parser.add_argument("--start", type=int, default=0)
    parser.add_argument("--ops", type=int, default=10000)
    parser.add_argument("--audit", type=int, default=10000)
    parser.add_argument("--progress", type=int, default=1000)
    parser.add_argument("--skip", default="")
    parser.add_argument("--log", default="")
    parser.add_argument("--audit-from", type=int, default=0, help="audit only from this operation on")
    parser.add_argument("--extra", default="", help="more guest options, e.g. 'fuzz_step_op=N fuzz_step_mask=0x5'")
    parser.add_argument("--vcpus", type=int, default=1,
                        help="fuzz_vcpus=: vCPUs running streams at once (dom0 only; -smp N, sched_smp=1, -icount)")
    parser.add_argument("--locate", action="store_true", help="on a failure, find the operation it happened in")
    parser.add_argument("--show", action="store_true", help="print the whole console")
    args = parser.parse_args()
    chunk = Chunk(args.role, args.mode, args.seed, args.start, args.ops, args.audit, args.progress, args.skip, args.log,
                  audit_from=args.audit_from, extra=args.extra, vcpus=args.vcpus)
    outcome = run(args.build, chunk)
    if args.show:
        print(outcome.serial)
    print(f"{chunk.role} ptwr={chunk.mode} seed {chunk.seed:#x} ops {chunk.start}-{chunk.start + chunk.ops - 1}: "
          f"{'passed' if outcome.passed else 'FAILED'} ({outcome.ops_ran} ran, {outcome.audits} audits, "
          f"{outcome.seconds:.1f} s)")
    for kind, detail in outcome.failures:
        print(f"  {kind}: {detail}")
    if not outcome.passed and args.locate:
        found, replay, _ = locate(args.build, outcome)
        if found:
            print(f"  at operation {found[0]}:\n    " + found[1].replace("\n", "\n    "))
            print(f"  replay: {replay.command()}")
            print(f"  alone:  {chunk.alone(found[0]).command()}")
    return 0 if outcome.passed else 1


if __name__ == "__main__":
    sys.exit(main())
