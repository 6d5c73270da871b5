"""Traces of Debian's Linux's fork loop (issue 11), one per hypervisor and PTE-write mode, and the
per-fork sequence read from them:

    python3 linux/trace_loop.py [--runs ours-emulate,ours-writable,xen417] [--iterations 3] [--out DIR]

Each run is Linux as a PV domU through the toolstack (pvhvd and `xl create examples/linux.cfg`,
the same on both hypervisors; on ours with the domain's `ptwr_mode`, which for Linux, without our
PVHV note, is what `ptwr=` on the hypervisor's command line gives a boot-module domU). /init's
`linux_init=trace` waits for a line on the console; the script starts `xl trace start FILE`
(the daemon records the hypervisor's trace buffers), types the line, and /bench runs N x
`fork+execve /bin/true` with each iteration between two ioperm markers (physdev_op hypercalls
in the trace: guest/user/bench.c --marker); `xl trace stop` once /init has ended. So a trace
holds the loop and little else, and the boot is not in it.

Written to DIR (default build/linux/traces): <run>.trace, <run>.console.log, what our xenalyze
says (<run>.stats.txt: --stats; <run>.forks.txt: --forks; <run>.per-iteration.txt:
--per-iteration) and Xen's own (<run>.xen-xenalyze.txt: --summary, where
build/deps/xen-4.17/xenalyze exists), and sequence.txt: the runs side by side (per_fork_table).
Every reader must succeed and no record may be lost; the exit status says whether all did.
"""
import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(ROOT, "tests", "integration", "lib"))
sys.path.insert(0, HERE)
import pvhvd_client  # noqa: E402
import run as linux_run  # noqa: E402

# name: (hypervisor, the domain's ptwr_mode or None)
RUNS = {"ours-emulate": ("ours", "emulate"), "ours-writable": ("ours", "writable"), "xen417": ("xen417", None)}
WAITING = "linux-init: waiting for the trace to start"
STOPPED = re.compile(r"^trace: (\d+) records, (\d+) lost$", re.MULTILINE)
DOMAIN = "linux"


class Capture:
    """One run's files and what the capture said."""

    def __init__(self, name, out_dir):
        self.name = name
        self.trace = os.path.join(out_dir, f"{name}.trace")
        self.console = os.path.join(out_dir, f"{name}.console.log")
        self.out_dir = out_dir
        self.records = self.lost = None
        self.counters = {}      # the hypervisor's, over the recording (ours: ptwr_* machine-wide)
        self.problems = []

    def path(self, suffix):
        return os.path.join(self.out_dir, f"{self.name}.{suffix}")


def wait_console(state, text, timeout, daemon):
    path = os.path.join(state, f"console-{DOMAIN}.log")
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        log = open(path, errors="replace").read() if os.path.exists(path) else ""
        if text in log:
            return log
        time.sleep(0.5)
    raise RuntimeError(f"{DOMAIN}'s console never said {text!r}:\n{log[-3000:]}\n{daemon.text()[-2000:]}")


def counters_of(client, hypervisor):
    """Ours: the hypervisor's ptwr counters, machine-wide (asked through domain 0, which lives
    on after Linux has powered off); Xen 4.17 has no such call."""
    if hypervisor != "ours":
        return {}
    answer = client.call("ptwr_mode", dom="0")
    if answer.get("ok") is not True:
        raise RuntimeError(f"ptwr_mode: {answer}")
    return answer.get("counters") or {}


def capture(build, name, iterations, out_dir, timeout=900):
    """Records one run's loop; returns its Capture (problems listed, never raised)."""
    hypervisor, mode = RUNS[name]
    run = Capture(name, out_dir)
    linux_run.images(build)
    xl = os.path.join(build, "bin", "xl")
    if os.path.exists(run.trace):
        os.remove(run.trace)
    with tempfile.TemporaryDirectory(prefix="pvhv-linux-trace") as state:
        env = dict(os.environ, PVHV_STATE_DIR=state)

        def call(*args, limit=600):
            done = subprocess.run([xl, *args], cwd=ROOT, env=env, capture_output=True, text=True, timeout=limit)
            if done.returncode != 0:
                raise RuntimeError(f"xl {' '.join(args)}: {done.returncode} {done.stdout}{done.stderr}")
            return done.stdout

        daemon = pvhvd_client.Daemon(build, state, ["--hypervisor", hypervisor])
        try:
            create = ["create", "examples/linux.cfg",
                      f'extra="{linux_run.KERNEL_ARGS} linux_init=trace bench_iterations={iterations}"']
            if mode:
                create.append(f'ptwr_mode="{mode}"')
            call(*create)
            wait_console(state, WAITING, timeout, daemon)
            client = daemon.client()
            before = counters_of(client, hypervisor)
            call("trace", "start", run.trace)
            # The line /init waits for, through the daemon's console backend.
            console = daemon.client()
            console.ok("console", dom=DOMAIN)
            console.sock.sendall(b"go\n")
            log = wait_console(state, linux_run.DONE, timeout, daemon)
            stopped = STOPPED.search(call("trace", "stop"))
            after = counters_of(client, hypervisor)
            run.counters = {k: after[k] - before.get(k, 0) for k in after if isinstance(after[k], int)}
            console.close()
            client.close()
            with open(run.console, "w") as f:
                f.write(log)
            if not stopped:
                run.problems.append("xl trace stop said nothing about records")
            else:
                run.records, run.lost = int(stopped.group(1)), int(stopped.group(2))
                if run.lost:
                    run.problems.append(f"{run.lost} records lost of {run.records}")
            if f"bench fork_execve iterations={iterations} " not in log or "linux-init: done, status 0" not in log:
                run.problems.append("the loop did not run to its end: " + log[-1500:])
        except (RuntimeError, OSError, subprocess.TimeoutExpired) as error:
            run.problems.append(str(error))
        finally:
            daemon.stop()
            daemon.kill_machine()
    return run


def read_with(run, build):
    """Our xenalyze (--stats, --forks, --per-iteration) and Xen's (--summary) on the trace; a
    reader failing or reporting lost records is a problem of the run."""
    if not os.path.exists(run.trace):
        return
    ours = os.path.join(build, "bin", "xenalyze")
    for option, suffix in (("--stats", "stats.txt"), ("--forks", "forks.txt"),
                           ("--per-iteration", "per-iteration.txt")):
        done = subprocess.run([ours, option, run.trace], capture_output=True, text=True, timeout=600)
        with open(run.path(suffix), "w") as f:
            f.write(done.stdout)
        errors = [line for line in done.stderr.splitlines() if line.startswith("error")]
        if done.returncode != 0 or errors:
            run.problems.append(f"xenalyze {option}: status {done.returncode} {errors[:3] or done.stderr[-500:]}")
    theirs = os.path.join(build, "deps", "xen-4.17", "xenalyze")
    if os.path.exists(theirs):
        done = subprocess.run([theirs, "--summary", run.trace], capture_output=True, text=True, timeout=600)
        with open(run.path("xen-xenalyze.txt"), "w") as f:
            f.write(done.stdout + done.stderr)
        if done.returncode != 0 or "|-- Domain" not in done.stdout:
            run.problems.append(f"Xen's xenalyze --summary: status {done.returncode} {done.stderr[-500:]}")


# `xenalyze --per-iteration`'s count rows: name, the typical iteration's, average, min, max.
COUNT_ROW = re.compile(r"^  (\S.*?)\s{2,}(\d+)\s+([\d.]+)\s+(\d+)\s+(\d+)$")


def count_rows(text):
    """{row name: (typical, average)} of a --per-iteration report."""
    rows = {}
    for line in text.splitlines():
        m = COUNT_ROW.match(line)
        if m:
            rows[m.group(1)] = (int(m.group(2)), float(m.group(3)))
    return rows


# Rows of records only our hypervisor writes (trace/EVENTS.md, TRC_PVHV): "n/a" on Xen 4.17, whose
# trace cannot show them (not zero).
OURS_ONLY_ROWS = ("PTE write faults taken over", "unhooks", "rehooks", "inactive L1s detached", "TLB flushes",
                  "flushes for a CR3 load", "invlpg")


def per_fork_table(reports):
    """The runs side by side: {run: --per-iteration text} -> the table's lines (typical iteration /
    average over all, per row)."""
    rows_of = {name: count_rows(text) for name, text in reports.items()}
    for name, rows in rows_of.items():
        if RUNS.get(name, ("",))[0] == "xen417":
            for row in OURS_ONLY_ROWS:
                rows.pop(row, None)
    names = list(reports)
    order = []
    for rows in rows_of.values():
        order += [r for r in rows if r not in order]
    lines = [f"{'per fork+execve (typical / average)':36}" + "".join(f"{n:>20}" for n in names)]
    for row in order:
        cells = []
        for n in names:
            value = rows_of[n].get(row)
            cells.append(f"{value[0]:>9} / {value[1]:<8.1f}" if value else f"{'n/a':>20}")
        lines.append(f"{row:36}" + "".join(f"{c:>20}" for c in cells))
    return lines


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--build", default=os.path.join(ROOT, "build"))
    parser.add_argument("--runs", default=",".join(RUNS))
    parser.add_argument("--iterations", type=int, default=3)
    parser.add_argument("--out", default=None, help="default BUILD/linux/traces")
    args = parser.parse_args(argv)
    build = os.path.abspath(args.build)
    out_dir = os.path.abspath(args.out or os.path.join(build, "linux", "traces"))
    os.makedirs(out_dir, exist_ok=True)
    runs, reports = [], {}
    for name in args.runs.split(","):
        if name not in RUNS:
            raise SystemExit(f"unknown run {name} (known: {', '.join(RUNS)})")
        print(f"linux trace: {name} ...", flush=True)
        run = capture(build, name, args.iterations, out_dir)
        read_with(run, build)
        if os.path.exists(run.path("per-iteration.txt")):
            reports[name] = open(run.path("per-iteration.txt")).read()
        print(f"  {run.trace}: {run.records} records, {run.lost} lost; hypervisor counters {run.counters}"
              + "".join(f"\n  problem: {p}" for p in run.problems), flush=True)
        runs.append(run)
    table = per_fork_table(reports)
    with open(os.path.join(out_dir, "sequence.txt"), "w") as f:
        f.write("\n".join(table) + "\n\n")
        for name, text in reports.items():
            f.write(f"=== {name} ===\n{text}\n")
    with open(os.path.join(out_dir, "captures.json"), "w") as f:
        json.dump({r.name: {"records": r.records, "lost": r.lost, "counters": r.counters, "problems": r.problems}
                   for r in runs}, f, indent=2)
    print("\n".join(table))
    print(f"(each run's sequence: {os.path.join(out_dir, 'sequence.txt')})")
    return 0 if all(not r.problems for r in runs) else 1


if __name__ == "__main__":
    raise SystemExit(main())
