#!/usr/bin/env python3
"""The Linux table of `make bench` (issue 11): Debian's own kernel and the project's busybox
initramfs (linux/initramfs.py), 1000 x `fork+execve /bin/true` and 1000 x `sh -c /bin/true`
(/bench, the same program the reference guest runs), under -icount shift=0 (one nanosecond of
virtual time per guest instruction: deterministic, one run per column):

  native          the bzImage booted by QEMU itself (`-kernel`), `mem=256M`
  xen417-domu     a PV domU on Xen 4.17: pvhvd (our relay dom0) and `xl create examples/linux.cfg`
                  with the loop's command line (PVHV_QEMU_EXTRA carries -icount to its machine)
  ours-emulate    a boot-module domU on ours (linux/run.py --role domu), ptwr=emulate
  ours-writable   the same with ptwr=writable

With --traces DIR (`make bench`: build/bench/linux-traces, beside linux.json), a trace of the
loop for each hypervisor column (linux/trace_loop.py: through the toolstack, the loop between
ioperm markers, --trace-iterations of fork+execve) read by both xenalyzes, and the per-fork
sequence of the columns side by side (DIR/sequence.txt).

Every domU gets 256 MiB. For ours, the hypervisor's counters of the whole run (boot and loop)
from its end-of-run summary, and, with --baseline, per loop iteration: the difference to a boot
whose loop runs once, over the other iterations (one fork+execve plus one sh -c each). A column
that does not finish says where it stopped (linux/run.py's milestones).

    python3 bench/run_linux_bench.py [--build build] [--scale 0.02] [--columns native,ours-emulate]
                                     [--baseline] [--output build/bench/linux.json] [--traces DIR]
"""
import argparse
import json
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(ROOT, "tests", "integration", "lib"))
sys.path.insert(0, os.path.join(ROOT, "linux"))
sys.path.insert(0, HERE)
import machine  # noqa: E402
import run as linux_run  # noqa: E402
import run_bench  # noqa: E402
import trace_loop  # noqa: E402

ITERATIONS = 1000
ICOUNT = ("-icount", "shift=0")
NATIVE_ARGS = "console=ttyS0 mem=256M"
COLUMNS = ("native", "xen417-domu", "ours-emulate", "ours-writable")
# The trace (linux/trace_loop.py's run) of each column that has one.
TRACE_RUNS = {"xen417-domu": "xen417", "ours-emulate": "ours-emulate", "ours-writable": "ours-writable"}
BENCHMARKS = (("fork_execve", "fork+execve /bin/true"), ("fork_sh", "sh -c /bin/true"))
# The hypervisor summary's counters (xen/summary.cpp) shown in the table.
COUNTERS = ("hypercalls", "mmu_hypercalls", "pv_page_faults", "ptwr_emulations", "ptwr_faults", "ptwr_unhooks",
            "ptwr_rehooks", "ptwr_revalidated", "tlb_flushes", "cr3_writes", "guest_syscalls")
SUMMARY_LINE = re.compile(r"^\(XEN\)\s+([a-z0-9_]+)\s+(\d+)\s*$", re.M)
MMU_UPDATE_LINE = re.compile(r"^\(XEN\)\s+hypercall mmu_update\s+\[\s*1\]\s+(\d+)\s*$", re.M)


def summary_counters(serial):
    """{name: value} of ours' end-of-run summary (and the mmu_update hypercall count)."""
    found = {name: int(value) for name, value in SUMMARY_LINE.findall(serial)}
    counters = {name: found[name] for name in COUNTERS if name in found}
    m = MMU_UPDATE_LINE.search(serial)
    if m:
        counters["mmu_update_calls"] = int(m.group(1))
    return counters


def figures(serial, iterations):
    """(ok, {benchmark: us per op}, why): /bench's lines parsed by run_bench's parser."""
    parsed = run_bench.parse_output(serial)
    per_op = {name: r.ns_per_op / 1000.0 for name, r in parsed.results.items()
              if r.status == "ok" and r.iterations == iterations}
    ok = parsed.done and all(name in per_op for name, _ in BENCHMARKS)
    return ok, per_op, "" if ok else "the loop did not finish"


def native(build, iterations, timeout):
    vmlinuz, _, initrd = linux_run.images(build)
    result = machine.boot(vmlinuz, f"{NATIVE_ARGS} bench_iterations={iterations}", [(initrd, "")],
                          timeout=timeout, until=linux_run.DONE, memory=linux_run.MEMORY, extra=ICOUNT)
    ok, per_op, why = figures(result.serial, iterations)
    return {"ok": ok, "per_op_us": per_op, "why": why or None, "seconds": round(result.seconds)}


def ours(build, iterations, timeout, ptwr, baseline):
    result = linux_run.boot(build, "ours", iterations, deterministic=True, timeout=timeout, ptwr=ptwr, until=None,
                            role="domu", watch=linux_run.stuck_after_fatal())
    ok, per_op, why = figures(result.serial, iterations)
    column = {"ok": ok, "per_op_us": per_op, "seconds": round(result.seconds),
              "counters": summary_counters(result.serial)}
    if not ok:
        reached, missing = linux_run.milestones(result.serial, linux_run.DOMU_ID)
        column["why"] = (f"stopped after '{reached[-1] if reached else 'none'}': "
                         + "; ".join(linux_run.fatal_report(result.serial, 3)))
    elif baseline and iterations > 1:
        # /bench runs at least one iteration: the difference to a 1-iteration boot, per iteration.
        one = linux_run.boot(build, "ours", 1, deterministic=True, timeout=timeout, ptwr=ptwr, until=None,
                             role="domu")
        first = summary_counters(one.serial)
        if "linux-init: done, status 0" in one.serial:
            column["per_iteration"] = {k: round((v - first.get(k, 0)) / (iterations - 1), 1)
                                       for k, v in column["counters"].items()}
    return column


def xen417_domu(build, iterations, timeout):
    """Linux as a PV domU on Xen 4.17, through pvhvd and xl (linux/run.py), under -icount."""
    result = linux_run.boot(build, "xen417", iterations, deterministic=True, timeout=timeout, role="domu")
    ok, per_op, why = figures(result.serial, iterations)
    if not ok:
        reached, _ = linux_run.milestones(result.serial, None)
        why = f"stopped after '{reached[-1] if reached else 'none'}': " + "; ".join(
            linux_run.fatal_report(result.serial, 3) or result.serial.strip().splitlines()[-2:])
    return {"ok": ok, "per_op_us": per_op, "why": why or None, "seconds": round(result.seconds)}


def run_column(name, build, iterations, timeout, baseline):
    if name == "native":
        return native(build, iterations, timeout)
    if name == "xen417-domu":
        return xen417_domu(build, iterations, timeout)
    return ours(build, iterations, timeout, name.split("-", 1)[1], baseline)


def ratio_lines(results, base, names):
    """`  <column> over <base>: <benchmark> <ratio>x, ...` for each of `names` with figures on both."""
    if base not in results:
        return []
    lines = []
    for n in names:
        ratios = []
        for key, label in BENCHMARKS:
            a, b = results[n]["per_op_us"].get(key), results[base]["per_op_us"].get(key)
            if a and b:
                ratios.append(f"{label} {a / b:.2f}x")
        if ratios:
            lines.append(f"  {n} over {base}: " + ", ".join(ratios))
    return lines


def table(results, iterations):
    lines = [f"Linux: Debian's kernel, busybox initramfs, {iterations} iterations each, -icount shift=0 "
             "(us of virtual time per operation)"]
    names = list(results)
    lines.append(f"{'':26}" + "".join(f"{n:>16}" for n in names))
    for key, label in BENCHMARKS:
        cells = []
        for n in names:
            value = results[n]["per_op_us"].get(key)
            cells.append(f"{value:16.1f}" if value is not None else f"{'-':>16}")
        lines.append(f"{label:26}" + "".join(cells))
    lines += ratio_lines(results, "native", [n for n in names if n != "native"])
    lines += ratio_lines(results, "xen417-domu", [n for n in names if n.startswith("ours")])
    for n in names:
        column = results[n]
        if not column["ok"]:
            lines.append(f"  {n}: did not finish: {column.get('why')}")
        if column.get("counters"):
            lines.append(f"  {n} counters (whole run): " +
                         ", ".join(f"{k} {v}" for k, v in column["counters"].items()))
        if column.get("per_iteration"):
            lines.append(f"  {n} per iteration (one of each): " +
                         ", ".join(f"{k} {v}" for k, v in column["per_iteration"].items()))
    return "\n".join(lines)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--build", default=os.path.join(ROOT, "build"))
    parser.add_argument("--scale", type=float, default=1.0, help=f"iterations = {ITERATIONS} x scale (at least 1)")
    parser.add_argument("--columns", default=",".join(COLUMNS))
    parser.add_argument("--baseline", action="store_true",
                        help="ours: also a boot with 0 iterations, for counters per iteration")
    parser.add_argument("--timeout", type=float, default=3600, help="per column, seconds")
    parser.add_argument("--output", default=None, help="JSON results (default build/bench/linux.json)")
    parser.add_argument("--traces", default=None, help="also a trace of the loop per hypervisor column in DIR, "
                        "and the per-fork sequence side by side (linux/trace_loop.py)")
    parser.add_argument("--trace-iterations", type=int, default=100, help="fork+execve iterations traced")
    args = parser.parse_args(argv)
    build = os.path.abspath(args.build)
    iterations = max(1, int(ITERATIONS * args.scale))
    results = {}
    for name in args.columns.split(","):
        if name not in COLUMNS:
            raise SystemExit(f"unknown column {name} (known: {', '.join(COLUMNS)})")
        print(f"linux bench: {name} ...", flush=True)
        results[name] = run_column(name, build, iterations, args.timeout, args.baseline)
    print(table(results, iterations))
    output = args.output or os.path.join(build, "bench", "linux.json")
    os.makedirs(os.path.dirname(output), exist_ok=True)
    with open(output, "w") as f:
        json.dump({"iterations": iterations, "deterministic": True, "columns": results}, f, indent=2)
    traced = [TRACE_RUNS[n] for n in results if n in TRACE_RUNS]
    if args.traces and traced:
        print(f"linux bench: traces of {', '.join(traced)} ...", flush=True)
        if trace_loop.main(["--build", build, "--runs", ",".join(traced), "--iterations", str(args.trace_iterations),
                            "--out", os.path.abspath(args.traces)]) != 0:
            print(f"linux bench: a trace was not captured or read whole (see {args.traces}/captures.json)")
    return 0 if all(c["ok"] for n, c in results.items() if n != "ours-writable") else 1


if __name__ == "__main__":
    raise SystemExit(main())
