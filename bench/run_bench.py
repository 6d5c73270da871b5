#!/usr/bin/env python3
"""The fork benchmark suite: boots the hypervisor once per page-table mode with the guest's
/bench program as init, and puts the modes side by side.

    writable   hypervisor ptwr=writable, guest pte=direct  (unhook, write freely, re-validate)
    emulate    hypervisor ptwr=emulate,  guest pte=direct  (trap and emulate every write)
    adaptive   hypervisor ptwr=adaptive, guest pte=direct  (per L1: emulate sparse writes, detach runs)
    hypercall  guest pte=hypercall                         (explicit mmu_update and friends)
    batched    guest pte=batched                           (hypercalls queued in multicalls)
    xen417     real Xen 4.17, guest pte=direct             (the peer: Xen emulates)
    xen417-nopti       the same with xpti=false (Xen's Meltdown mitigation off)
    xen417-hypercall   real Xen 4.17, guest pte=hypercall
    xen417-batched     real Xen 4.17, guest pte=batched
    writable-untraced, emulate-untraced, adaptive-untraced
               the same on build/xen/xen-untraced (trace points compiled out): the baseline
               of the "tracing off" table, which shows what compiled-in trace points cost

Writes <build>/bench/results.json and results.md, a serial log per mode, a picture per benchmark
(plot-<benchmark>.png, bench/plot_bench.py), and prints the table, with the ratio of each of our
modes to the Xen 4.17 columns that ran the same guest.
Figures are guest CLOCK_MONOTONIC time under QEMU TCG: with --deterministic (-icount shift=0)
one nanosecond per guest instruction, repeatable, and never hardware time.

Exit status: 0, or 1 under --strict when any mode or benchmark failed; 2 for bad usage.
"""
import argparse
import concurrent.futures
import datetime
import json
import os
import re
import shlex
import subprocess
import sys
from dataclasses import dataclass, field

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cost_model  # noqa: E402
import plot_bench  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tests", "integration", "lib"))
import machine  # noqa: E402

# (name printed by /bench, row label, unit)
BENCHMARKS = [
    ("fork_exit", "fork+exit", "us/op"),
    ("fork_execve", "fork+execve", "us/op"),
    ("fork_sh", "fork+/bin/sh -c", "us/op"),
    ("dirty1_fork_exit", "dirty 1MB + fork+exit", "us/op"),
    ("dirty16_fork_exit", "dirty 16MB + fork+exit", "us/op"),
    ("dirty64_fork_exit", "dirty 64MB + fork+exit", "us/op"),
    ("pte_write", "PTE write", "ns/write"),
    ("mixed_fork", "CoW storm 16MB + fork+exit", "us/op"),
]
BENCHMARK_NAMES = [name for name, _, _ in BENCHMARKS]

# (counter key printed by /bench, column label)
COUNTERS = [
    ("page_faults", "page faults"),
    ("emulations", "emulations"),
    ("unhooks", "unhooks"),
    ("rehooks", "rehooks"),
    ("revalidated", "re-validated"),
    ("flushes", "TLB flushes"),
    ("mmu_hypercalls", "MMU hypercalls"),
    ("hypercalls", "hypercalls"),
    ("cr3_writes", "CR3 writes"),
    ("invlpgs", "invlpg"),
    ("guest_syscalls", "guest syscalls"),
    ("type_change_flushes", "type-change flushes"),
]
COUNTER_KEYS = [key for key, _ in COUNTERS]

GUEST_MEMORY = "dom0_mem=256M"
XEN_ARGS = f"console=com1 com1=115200,8n1 {GUEST_MEMORY}"


@dataclass
class Mode:
    name: str
    hypervisor: str        # "ours" or "xen417"
    hypervisor_args: str
    guest_args: str
    description: str
    image: str = "xen"     # ours: build/xen/<image>
    traced_peer: str = ""  # an untraced mode: the mode it is the baseline of


MODES = {
    "writable": Mode("writable", "ours", f"ptwr=writable {GUEST_MEMORY} loglvl=info", "pte=direct",
                     "writable page tables: unhook, write freely, re-validate"),
    "emulate": Mode("emulate", "ours", f"ptwr=emulate {GUEST_MEMORY} loglvl=info", "pte=direct",
                    "trap and emulate every page-table write"),
    "adaptive": Mode("adaptive", "ours", f"ptwr=adaptive {GUEST_MEMORY} loglvl=info", "pte=direct",
                     "per L1: emulate while writes are sparse, detach for runs"),
    "hypercall": Mode("hypercall", "ours", f"ptwr=emulate {GUEST_MEMORY} loglvl=info",
                      "pte=hypercall", "one mmu_update hypercall per write"),
    "batched": Mode("batched", "ours", f"ptwr=emulate {GUEST_MEMORY} loglvl=info", "pte=batched",
                    "page-table hypercalls batched in multicalls"),
    "xen417": Mode("xen417", "xen417", XEN_ARGS, "pte=direct", "real Xen 4.17 (emulates direct writes)"),
    "xen417-nopti": Mode("xen417-nopti", "xen417", f"{XEN_ARGS} xpti=false", "pte=direct",
                         "real Xen 4.17 without XPTI, its Meltdown mitigation (emulates direct writes)"),
    "xen417-hypercall": Mode("xen417-hypercall", "xen417", XEN_ARGS, "pte=hypercall",
                             "real Xen 4.17, one mmu_update hypercall per write"),
    "xen417-batched": Mode("xen417-batched", "xen417", XEN_ARGS, "pte=batched",
                           "real Xen 4.17, page-table hypercalls batched in multicalls"),
}
# Each of our modes against the Xen 4.17 columns with the same guest: Xen has no writable
# pagetables (since 4.x it emulates every direct write), so writable and emulate meet the
# same Xen columns, with XPTI and without.
XEN_PEERS = {
    "writable": ["xen417", "xen417-nopti"],
    "emulate": ["xen417", "xen417-nopti"],
    "adaptive": ["xen417", "xen417-nopti"],
    "hypercall": ["xen417-hypercall"],
    "batched": ["xen417-batched"],
}
for _traced in ("writable", "emulate", "adaptive"):
    _mode = MODES[_traced]
    MODES[f"{_traced}-untraced"] = Mode(
        f"{_traced}-untraced", "ours", _mode.hypervisor_args, _mode.guest_args,
        f"{_mode.description}; trace points compiled out", image="xen-untraced",
        traced_peer=_traced)
DEFAULT_MODES = ["writable", "emulate", "hypercall"]


# ---------------------------------------------------------------- parsing the guest's output

# A line of /bench may carry a console prefix: "(d0) " or "(XEN) " with an optional timestamp.
LINE = re.compile(r"^(?:\((?:XEN|d\d+)\)\s*(?:\[[^\]]*\]\s*)?)?(bench|counters)\s+(.*)$")
NAME = re.compile(r"^[a-z][a-z0-9_]*$")


@dataclass
class BenchResult:
    name: str
    status: str = "missing"      # ok, failed, unavailable, missing
    iterations: int = 0
    total_ns: int = 0
    ns_per_op: float = 0.0
    counters: dict = None        # key -> delta over the whole benchmark, or None
    counters_status: str = "missing"   # ok, unavailable, missing
    reason: str = ""


@dataclass
class ParsedRun:
    started: bool = False
    start_args: int = None       # how many arguments /bench says it received
    done: bool = False
    usage_error: str = ""
    results: dict = field(default_factory=dict)   # name -> BenchResult, in order of appearance
    errors: list = field(default_factory=list)    # malformed or unexpected lines


def _key_values(text):
    """'a=1 b=2' -> {'a': '1', 'b': '2'}, or None if any word is not key=value."""
    values = {}
    for word in text.split():
        key, equals, value = word.partition("=")
        if not equals or not key or not value or key in values:
            return None
        values[key] = value
    return values


def _parse_bench(parsed, number, line, rest):
    words = rest.split(None, 1)
    name = words[0] if words else ""
    tail = words[1] if len(words) > 1 else ""
    if name == "start":
        parsed.started = True
        match = re.search(r"\bargs=(\d+)", tail)
        parsed.start_args = int(match.group(1)) if match else None
        return
    if name == "done":
        parsed.done = True
        return
    if name == "error":
        parsed.usage_error = tail
        return
    if not NAME.match(name):
        parsed.errors.append(f"line {number}: bad benchmark name: {line!r}")
        return
    if name in parsed.results and parsed.results[name].status != "missing":
        parsed.errors.append(f"line {number}: {name} reported twice: {line!r}")
        return
    result = parsed.results.setdefault(name, BenchResult(name))
    if tail.startswith("failed"):
        result.status = "failed"
        result.reason = tail[len("failed"):].strip() or "no reason given"
        return
    if tail == "unavailable":
        result.status = "unavailable"
        return
    values = _key_values(tail)
    try:
        if values is None or set(values) != {"iterations", "total_ns", "ns_per_op"}:
            raise ValueError
        iterations, total_ns = int(values["iterations"]), int(values["total_ns"])
        ns_per_op = float(values["ns_per_op"])
        if iterations <= 0 or total_ns < 0 or ns_per_op < 0:
            raise ValueError
    except ValueError:
        del parsed.results[name]
        parsed.errors.append(f"line {number}: malformed bench line: {line!r}")
        return
    result.status = "ok"
    result.iterations, result.total_ns, result.ns_per_op = iterations, total_ns, ns_per_op


def _parse_counters(parsed, number, line, rest):
    words = rest.split(None, 1)
    name = words[0] if words else ""
    tail = words[1] if len(words) > 1 else ""
    result = parsed.results.get(name)
    if result is None or result.status == "missing":
        parsed.errors.append(f"line {number}: counters for a benchmark not reported: {line!r}")
        return
    if result.counters_status != "missing":
        parsed.errors.append(f"line {number}: counters of {name} reported twice: {line!r}")
        return
    if tail == "unavailable":
        result.counters_status = "unavailable"
        return
    values = _key_values(tail)
    try:
        if values is None or set(values) != set(COUNTER_KEYS):
            raise ValueError
        counters = {key: int(values[key]) for key in COUNTER_KEYS}
        if min(counters.values()) < 0:
            raise ValueError
    except ValueError:
        parsed.errors.append(f"line {number}: malformed counters line: {line!r}")
        return
    result.counters_status = "ok"
    result.counters = counters


def parse_output(text):
    """Reads every bench/counters line of a serial console; never raises on bad input."""
    parsed = ParsedRun()
    for number, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        match = LINE.match(line)
        if not match:
            continue
        kind, rest = match.group(1), match.group(2).strip()
        if parsed.done:
            parsed.errors.append(f"line {number}: output after 'bench done': {line!r}")
            continue
        if kind == "bench":
            _parse_bench(parsed, number, line, rest)
        else:
            _parse_counters(parsed, number, line, rest)
    return parsed


# ---------------------------------------------------------------- judging a run

@dataclass
class ModeRun:
    mode: Mode
    parsed: ParsedRun
    problems: list                 # why this mode failed (empty: it succeeded)
    notes: list                    # worth knowing, not failures
    exit_value: int = None
    timed_out: bool = False
    seconds: float = 0.0
    qemu_command: str = ""
    serial: str = ""
    expected: list = field(default_factory=lambda: list(BENCHMARK_NAMES))

    @property
    def ok(self):
        return not self.problems


def judge(mode, parsed, serial, exit_value, timed_out, expected=None, args_passed=False):
    """Returns (problems, notes) for one mode's run."""
    problems, notes = [], []
    ours = mode.hypervisor == "ours"
    expected = list(BENCHMARK_NAMES if expected is None else expected)
    if timed_out:
        problems.append("machine did not end in time (timeout)")
    if not parsed.started:
        problems.append("/bench did not start (is it in the initrd? is init=/bench honoured?)")
    if parsed.usage_error:
        problems.append(f"/bench rejected its arguments: {parsed.usage_error}")
    if args_passed and parsed.started and parsed.start_args == 0:
        notes.append("the guest kernel passed no arguments to /bench (cmdline after '--'): "
                     "default iteration counts were used")
    problems.extend(parsed.errors)
    for name in expected:
        result = parsed.results.get(name)
        if result is None or result.status == "missing":
            if parsed.started and not parsed.usage_error:
                problems.append(f"{name}: not reported")
        elif result.status == "failed":
            problems.append(f"{name}: failed: {result.reason}")
        elif result.status == "unavailable":
            (problems if ours else notes).append(f"{name}: unavailable on this kernel")
        elif result.counters_status == "missing":
            problems.append(f"{name}: no counters line")
        elif result.counters_status == "unavailable" and ours:
            problems.append(f"{name}: counters unavailable (system call 1000 failed)")
    if parsed.started and not parsed.done and not parsed.usage_error:
        problems.append("no 'bench done' line")
    for line in serial.splitlines():
        if re.match(r"audit \S+ mismatches=\d+", line.strip()):
            problems.append(f"frame-table audit after a benchmark: {line.strip()}")
    if ours:
        if "audit: clean" not in serial:
            problems.append("frame-table audit not clean (no 'audit: clean')")
        if not timed_out and exit_value != 0:
            problems.append(f"machine exit value {exit_value}, expected 0")
    return problems, notes


# ---------------------------------------------------------------- running the machines

def qemu_command(image, append, modules, memory, extra):
    """The command machine.boot runs (its serial file is a temporary one)."""
    return shlex.join(machine.qemu_command(image, append, modules, memory, extra, "<serial.log>"))


def bench_arguments(scale, extra):
    words = []
    if scale != 1.0:
        words += ["--scale", f"{scale:g}"]
    words += extra
    return words


def expected_benchmarks(bench_extra):
    """The benchmarks /bench runs with these arguments: all of them, or those of its last
    `--only A,B` (as /bench reads it), so that a narrowed run is judged on what it asked for."""
    expected = list(BENCHMARK_NAMES)
    for i, word in enumerate(bench_extra[:-1]):
        if word == "--only":
            expected = [name for name in bench_extra[i + 1].split(",") if name]
    return expected


def run_mode(mode, build, scale, bench_extra, deterministic, timeout, memory="512M",
             initrd=None):
    image = (os.path.join(build, "xen", mode.image) if mode.hypervisor == "ours"
             else machine.xen417(build))
    kernel = os.path.join(build, "guest", "kernel")
    initrd = initrd or os.path.join(build, "guest", "initrd.cpio")
    words = bench_arguments(scale, bench_extra)
    guest_args = f"{mode.guest_args} init=/bench"
    if words:
        guest_args += " -- " + " ".join(words)
    modules = [(kernel, guest_args), (initrd, "")]
    extra = ("-icount", "shift=0") if deterministic else ()
    command = qemu_command(image, mode.hypervisor_args, modules, memory, extra)
    missing = [p for p in (image, kernel, initrd) if not os.path.exists(p)]
    if missing:
        return ModeRun(mode, ParsedRun(), [f"missing {p} (build first)" for p in missing], [],
                       qemu_command=command)
    until = None if mode.hypervisor == "ours" else "bench done"
    result = machine.boot(image, mode.hypervisor_args, modules, timeout=timeout, until=until,
                          memory=memory, extra=extra)
    parsed = parse_output(result.serial)
    exit_value = result.debug_exit_value()
    timed_out = result.timed_out
    if until and parsed.done and result.exit_status is None:
        timed_out = False   # Xen cannot end the machine: the harness ended it on 'bench done'
    expected = expected_benchmarks(bench_extra)
    problems, notes = judge(mode, parsed, result.serial, exit_value, timed_out, expected,
                            args_passed=bool(words))
    return ModeRun(mode, parsed, problems, notes, exit_value, timed_out, result.seconds, command,
                   result.serial, expected)


# ---------------------------------------------------------------- results

def _per_op(result):
    """The figure of the table: us per fork, ns per PTE write."""
    if result is None or result.status != "ok":
        return None
    return result.ns_per_op if result.name == "pte_write" else result.ns_per_op / 1000.0


def records(runs):
    rows = []
    for name, label, unit in BENCHMARKS:
        for run in runs:
            result = run.parsed.results.get(name)
            record = {"benchmark": name, "label": label, "mode": run.mode.name,
                      "hypervisor": run.mode.hypervisor, "unit": unit,
                      "status": result.status if result else "missing"}
            if result is not None and result.status == "ok":
                record.update({
                    "per_op": _per_op(result),
                    "us_per_op": result.ns_per_op / 1000.0,
                    "ns_per_op": result.ns_per_op,
                    "iterations": result.iterations,
                    "total_ns": result.total_ns,
                })
                if result.counters_status == "ok":
                    record["counters"] = dict(result.counters)
                    record["counters_per_op"] = {k: v / result.iterations
                                                 for k, v in result.counters.items()}
                else:
                    record["counters"] = None
                    record["counters_per_op"] = None
            if result is not None and result.reason:
                record["reason"] = result.reason
            rows.append(record)
    return rows


def git_state():
    def git(*args):
        try:
            return subprocess.run(["git", "-C", ROOT, *args], capture_output=True, text=True,
                                  timeout=20).stdout.strip()
        except (OSError, subprocess.SubprocessError):
            return ""
    return {"commit": git("rev-parse", "HEAD") or None,
            "dirty": bool(git("status", "--porcelain", "--untracked-files=no"))}


def metadata(runs, deterministic, scale, started):
    return {
        "generated": started,
        "git": git_state(),
        "deterministic": deterministic,
        "icount": "-icount shift=0" if deterministic else None,
        "iterations_scale": scale,
        "time_base": ("guest CLOCK_MONOTONIC under QEMU TCG with -icount shift=0: 1 ns per guest "
                      "instruction (virtual time, not hardware time)") if deterministic else
                     ("guest CLOCK_MONOTONIC under QEMU TCG without -icount: follows host time, "
                      "noisy; not hardware time"),
        "modes": {run.mode.name: {
            "description": run.mode.description,
            "hypervisor": run.mode.hypervisor,
            "hypervisor_args": run.mode.hypervisor_args,
            "guest_args": run.mode.guest_args,
            "qemu_command": run.qemu_command,
            "ok": run.ok,
            "problems": run.problems,
            "notes": run.notes,
            "exit_value": run.exit_value,
            "timed_out": run.timed_out,
            "seconds": round(run.seconds, 2),
        } for run in runs},
    }


def _figure(name, value):
    """A per-operation figure as the tables print it: ns per PTE write whole, us to 0.1."""
    if value is None:
        return "-"
    return f"{value:.0f}" if name == "pte_write" else f"{value:.1f}"


def _cell(run, name):
    result = run.parsed.results.get(name)
    if result is not None and result.status == "ok":
        return _figure(name, _per_op(result))
    if result is not None and result.status == "unavailable":
        return "n/a"
    if not run.ok and (result is None or result.status in ("missing", "failed")):
        return "FAILED"
    return "-"


def _unit(unit, deterministic):
    return f"{unit} (TCG virtual time)" if deterministic else f"{unit} (TCG, host-paced)"


def table_rows(runs, deterministic):
    """The main table as rows of strings (header first)."""
    rows = [["benchmark", *[run.mode.name for run in runs], "unit"]]
    for name, label, unit in BENCHMARKS:
        rows.append([label, *[_cell(run, name) for run in runs], _unit(unit, deterministic)])
    return rows


def counter_rows(run):
    rows = [["benchmark", *[label for _, label in COUNTERS]]]
    for name, label, _ in BENCHMARKS:
        result = run.parsed.results.get(name)
        if result is None or result.status != "ok" or result.counters_status != "ok":
            continue
        rows.append([label, *[_number(result.counters[key] / result.iterations)
                              for key in COUNTER_KEYS]])
    return rows


def _number(value):
    shown = round(value, 2) if value < 100 else round(value, 1)
    return str(int(shown)) if shown == int(shown) else str(shown)


def format_text(rows):
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    return "\n".join("  ".join(cell.ljust(widths[i]) if i == 0 or i == len(row) - 1
                               else cell.rjust(widths[i]) for i, cell in enumerate(row)).rstrip()
                     for row in rows)


def format_markdown(rows):
    lines = ["| " + " | ".join(rows[0]) + " |",
             "| " + " | ".join(["---"] + ["---:"] * (len(rows[0]) - 2) + ["---"]) + " |"]
    lines += ["| " + " | ".join(row) + " |" for row in rows[1:]]
    return "\n".join(lines)


def tracing_pairs(runs):
    """(traced run, untraced run) for each untraced baseline whose traced mode also ran."""
    by_name = {run.mode.name: run for run in runs}
    return [(by_name[run.mode.traced_peer], run) for run in runs
            if run.mode.traced_peer and run.mode.traced_peer in by_name]


def primary_runs(runs):
    """The runs of the main table: untraced baselines go to the tracing table instead."""
    paired = {untraced.mode.name for _, untraced in tracing_pairs(runs)}
    return [run for run in runs if run.mode.name not in paired]


def tracing_cost(runs):
    """Per benchmark and traced mode: the figure with trace points compiled in (tracing off)
    and compiled out, and the difference in percent. None where either is missing."""
    rows = []
    for traced, untraced in tracing_pairs(runs):
        for name, label, unit in BENCHMARKS:
            on = _per_op(traced.parsed.results.get(name))
            out = _per_op(untraced.parsed.results.get(name))
            delta = (on - out) / out * 100.0 if on is not None and out else None
            rows.append({"mode": traced.mode.name, "benchmark": name, "label": label, "unit": unit,
                         "trace_points_off": on, "compiled_out": out, "delta_percent": delta})
    return rows


def tracing_rows(runs):
    pairs = tracing_pairs(runs)
    if not pairs:
        return None
    header = ["benchmark"]
    for traced, _ in pairs:
        header += [f"{traced.mode.name} off", f"{traced.mode.name} compiled out", "difference"]
    rows = [header + ["unit"]]
    cost = {(row["mode"], row["benchmark"]): row for row in tracing_cost(runs)}

    for name, label, unit in BENCHMARKS:
        row = [label]
        for traced, _ in pairs:
            c = cost[(traced.mode.name, name)]
            row += [_figure(name, c["trace_points_off"]), _figure(name, c["compiled_out"]),
                    "-" if c["delta_percent"] is None else f"{c['delta_percent']:+.2f}%"]
        rows.append(row + [unit])
    return rows


def xen_ratios(runs):
    """Per benchmark, each of our modes over each matching Xen 4.17 column that ran: below 1
    is faster than Xen. Exact under -icount (both count the same machine's instructions)."""
    by_name = {run.mode.name: run for run in runs}
    rows = []
    for ours, peers in XEN_PEERS.items():
        for peer in peers:
            if ours not in by_name or peer not in by_name:
                continue
            for name, label, unit in BENCHMARKS:
                mine = _per_op(by_name[ours].parsed.results.get(name))
                xen = _per_op(by_name[peer].parsed.results.get(name))
                ratio = mine / xen if mine is not None and xen else None
                rows.append({"mode": ours, "xen": peer, "benchmark": name, "label": label, "unit": unit,
                             "ours": mine, "xen_figure": xen, "ratio": ratio})
    return rows


def ratio_rows(runs):
    ratios = xen_ratios(runs)
    pairs = list(dict.fromkeys((r["mode"], r["xen"]) for r in ratios))
    if not pairs:
        return None
    by_key = {(r["mode"], r["xen"], r["benchmark"]): r for r in ratios}
    rows = [["benchmark", *[f"{mode} / {xen}" for mode, xen in pairs], "unit"]]
    for name, label, _ in BENCHMARKS:
        cells = []
        for mode, xen in pairs:
            ratio = by_key[(mode, xen, name)]["ratio"]
            cells.append("-" if ratio is None else f"{ratio:.3f}")
        rows.append([label, *cells, "ratio of per-operation figures"])
    return rows


def report_text(runs, deterministic, markdown=False, profile=None):
    fmt = format_markdown if markdown else format_text
    all_runs, runs = runs, primary_runs(runs)
    out = []
    if markdown:
        out += ["# Fork benchmarks", "",
                "Guest CLOCK_MONOTONIC time under QEMU TCG"
                + (" with `-icount shift=0` (1 ns per guest instruction): virtual time, "
                   "not hardware time." if deterministic else
                   " without -icount: paced by the host, noisy; not hardware time."), ""]
    out.append(fmt(table_rows(runs, deterministic)))
    for run in runs:
        rows = counter_rows(run)
        title = f"counters per operation, mode {run.mode.name} ({run.mode.description})"
        out += ["", f"## {title}" if markdown else title]
        if markdown:
            out.append("")
        if len(rows) > 1:
            out.append(fmt(rows))
        else:
            out.append("(no counters)")
    ratios = ratio_rows(all_runs)
    if ratios:
        title = "ours / Xen 4.17, the same guest on the same QEMU (below 1: faster than Xen)"
        out += ["", f"## {title}" if markdown else title]
        if markdown:
            out.append("")
        out.append(fmt(ratios))
    modelled = cost_model.table_rows(cost_model.model(
        {"metadata": {"deterministic": deterministic, "git": git_state()}, "results": records(all_runs)}, profile))
    if modelled:
        title = ("MODELLED, not measured: hardware cost model, instructions + c_trap x traps + "
                 "c_flush x full flushes + c_invlpg x invlpg (bench/cost_model.py, constants in "
                 "bench/README.md); our events from our counters, Xen's from a profile of this commit "
                 "(--events-profile) where there is one")
        out += ["", f"## {title}" if markdown else title]
        if markdown:
            out.append("")
        out.append(fmt(modelled))
    tracing = tracing_rows(all_runs)
    if tracing:
        title = ("tracing off: trace points compiled in but not recording (build/xen/xen) against "
                 "compiled out (build/xen/xen-untraced); per operation")
        out += ["", f"## {title}" if markdown else title]
        if markdown:
            out.append("")
        out.append(fmt(tracing))
    for run in all_runs:
        if run.problems or run.notes:
            out += ["", f"## mode {run.mode.name}" if markdown else f"mode {run.mode.name}:"]
            if markdown:
                out.append("")
            out += [f"- FAILED: {p}" for p in run.problems]
            out += [f"- note: {n}" for n in run.notes]
    return "\n".join(out) + "\n"


def events_profile(path):
    """The profile the cost model takes Xen's events from, or None (none given, or unreadable:
    said in one line; the model then leaves those columns out)."""
    if not path:
        return None
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError) as e:
        print(f"bench: no events profile ({path}: {e})", flush=True)
        return None


def write_results(output_dir, runs, deterministic, scale, started, profile=None):
    os.makedirs(output_dir, exist_ok=True)
    document = {"metadata": metadata(runs, deterministic, scale, started), "results": records(runs),
                "tracing_off_cost": tracing_cost(runs), "xen_ratios": xen_ratios(runs)}
    document["cost_model"] = {"constants": cost_model.CONSTANTS, "rows": cost_model.model(document, profile)}
    with open(os.path.join(output_dir, "results.json"), "w") as f:
        json.dump(document, f, indent=2)
        f.write("\n")
    with open(os.path.join(output_dir, "results.md"), "w") as f:
        f.write(report_text(runs, deterministic, markdown=True, profile=profile))
    for run in runs:
        if run.serial:
            with open(os.path.join(output_dir, f"{run.mode.name}.log"), "w") as f:
                f.write(run.serial)
    return document


# ---------------------------------------------------------------- command line

def arguments(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--build", default=None, help="build directory (default: build)")
    parser.add_argument("--modes", default=",".join(DEFAULT_MODES),
                        help=f"comma-separated, of {','.join(MODES)} (default: %(default)s)")
    parser.add_argument("--xen417", action="store_true",
                        help="add real Xen 4.17 as a peer column (guest pte=direct)")
    parser.add_argument("--iterations-scale", type=float, default=1.0,
                        help="multiply /bench's iteration counts (passed after '--')")
    parser.add_argument("--bench-args", default="",
                        help="more arguments for /bench, e.g. \"--only fork_exit --warmup 0\"")
    parser.add_argument("--deterministic", action="store_true",
                        help="add -icount shift=0 to QEMU (repeatable virtual time)")
    parser.add_argument("--strict", action="store_true",
                        help="exit 1 when any mode or benchmark failed")
    parser.add_argument("--jobs", type=int, default=1,
                        help="machines at once (only sensible with --deterministic)")
    parser.add_argument("--timeout", type=float, default=None,
                        help="seconds per boot (default: 300, times the scale if above 1)")
    parser.add_argument("--output-dir", default=None, help="default: <build>/bench")
    parser.add_argument("--initrd", default=None,
                        help="another initrd with /bench (default: <build>/guest/initrd.cpio)")
    parser.add_argument("--events-profile", default=None,
                        help="a profile.json of this commit (bench/run_profile.py): the events of the columns "
                        "without counters (Xen 4.17's) for the cost model")
    parser.add_argument("--hypervisor", default=None, help=argparse.SUPPRESS)  # CTest habit
    args = parser.parse_args(argv)
    modes = [m for m in args.modes.split(",") if m]
    if args.xen417 and "xen417" not in modes:
        modes.append("xen417")
    unknown = [m for m in modes if m not in MODES]
    if unknown or not modes:
        parser.error(f"unknown mode(s) {','.join(unknown) or '(none)'}; known: {','.join(MODES)}")
    if not args.iterations_scale > 0:
        parser.error("--iterations-scale must be positive")
    if args.jobs < 1:
        parser.error("--jobs must be at least 1")
    args.mode_list = modes
    return args


def main(argv=None):
    args = arguments(argv)
    build = os.path.abspath(machine.build_dir(args.build))
    output_dir = args.output_dir or os.path.join(build, "bench")
    timeout = args.timeout or 300 * max(1.0, args.iterations_scale)
    bench_extra = shlex.split(args.bench_args)
    started = datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")

    def one(name):
        print(f"bench: running mode {name} ...", flush=True)
        run = run_mode(MODES[name], build, args.iterations_scale, bench_extra, args.deterministic,
                       timeout, initrd=args.initrd and os.path.abspath(args.initrd))
        verdict = "ok" if run.ok else f"FAILED ({len(run.problems)} problems)"
        print(f"bench: mode {name}: {verdict} after {run.seconds:.1f} s", flush=True)
        return run

    with concurrent.futures.ThreadPoolExecutor(max_workers=args.jobs) as pool:
        runs = list(pool.map(one, args.mode_list))

    profile = events_profile(args.events_profile)
    write_results(output_dir, runs, args.deterministic, args.iterations_scale, started, profile)
    plotted = plot_bench.draw(["--results", os.path.join(output_dir, "results.json")])  # plot-*.png beside it
    print()
    print(report_text(runs, args.deterministic, profile=profile), end="")
    for run in runs:
        if run.problems and run.serial:
            tail = run.serial.splitlines()[-25:]
            print(f"\n---- mode {run.mode.name}: last {len(tail)} console lines "
                  f"(full log: {os.path.join(output_dir, run.mode.name + '.log')}) ----")
            print("\n".join(tail))
    print(f"\nresults: {os.path.join(output_dir, 'results.json')}, "
          f"{os.path.join(output_dir, 'results.md')}")
    failed = [run.mode.name for run in runs if not run.ok] + ([] if plotted == 0 else ["(the plots)"])
    if failed:
        print(f"bench: FAILED modes: {', '.join(failed)}"
              + ("" if args.strict else " (not an error without --strict)"))
    return 1 if failed and args.strict else 0


if __name__ == "__main__":
    sys.exit(main())
