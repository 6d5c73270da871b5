"""Traces of Debian's Linux's fork loop and its per-fork sequence (issue 11), through the toolstack
(linux/trace_loop.py): Linux as a PV domU (`xl create examples/linux.cfg`, linux_init=trace),
`xl trace start` while /init waits, 3 x fork+execve /bin/true each between two ioperm markers
(physdev_op hypercalls), `xl trace stop`. On ours once per PTE-write mode (the domain's
ptwr_mode: emulate, writable), on Xen 4.17 once.

Checked: no record lost; our xenalyze (--stats, --forks, --per-iteration) and Xen's own
(--summary, build/deps/xen-4.17/xenalyze) read each trace without an error; --per-iteration
finds the 3 iterations, complete, each with its mmu_update batches and entries, mmuext_op and
emulated PTE writes; on ours the trace agrees with the hypervisor's counters over the recording:
as many PTWR_EMULATION records as `ptwr_emulations` counted, the loop's emulations among them,
no L1 of Linux unhooked or detached in either mode (Linux has no PVHV note; its trapped writes
hit tables the running address space reaches, so writable emulates them as emulate does).
"""
import os
import re
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import guest_boot  # noqa: E402
import machine  # noqa: E402
import linux_guest  # noqa: E402,F401  (puts linux/ on the path)
import trace_loop  # noqa: E402

ITERATIONS = 3
RUNS = {"ours": ("ours-emulate", "ours-writable"), "xen417": ("xen417",)}


def stats_count(stats, name):
    m = re.search(rf"^\s+0x[0-9a-f]+ {name}\s+(\d+)", stats, re.M)
    return int(m.group(1)) if m else 0


def check(run, build):
    machine.expect(not run.problems, f"{run.name}: " + "; ".join(run.problems))
    machine.expect(run.lost == 0 and run.records and run.records > 1000,
                   f"{run.name}: {run.records} records, {run.lost} lost")
    report = open(run.path("per-iteration.txt")).read()
    machine.expect(f"{ITERATIONS} iterations ({ITERATIONS} complete, 0 with lost records)" in report,
                   f"{run.name}: the loop's iterations not found:\n{report[:3000]}")
    rows = trace_loop.count_rows(report)
    for row in ("mmu_update calls", "mmu_update entries", "mmuext_op calls", "emulated PTE writes"):
        machine.expect(rows.get(row, (0, 0))[1] >= 1, f"{run.name}: no {row} per iteration:\n{report[:3000]}")
    machine.expect(rows["mmu_update entries"][1] >= rows["mmu_update calls"][1],
                   f"{run.name}: fewer mmu_update entries than batches: {rows}")
    xen_summary = open(run.path("xen-xenalyze.txt")).read() if os.path.exists(run.path("xen-xenalyze.txt")) else ""
    if os.path.exists(os.path.join(build, "deps", "xen-4.17", "xenalyze")):
        machine.expect("|-- Domain 1 --|" in xen_summary, f"{run.name}: Xen's xenalyze: {xen_summary[-2000:]}")
    if run.name.startswith("ours"):
        stats = open(run.path("stats.txt")).read()
        emulations = stats_count(stats, "pv_ptwr_emulation")
        machine.expect(emulations == run.counters.get("ptwr_emulations"),
                       f"{run.name}: {emulations} PTWR_EMULATION records, the hypervisor counted "
                       f"{run.counters.get('ptwr_emulations')} over the recording")
        loop_emulations = rows["emulated PTE writes"][1] * ITERATIONS
        machine.expect(0 < loop_emulations <= emulations, f"{run.name}: loop {loop_emulations} of {emulations}")
        machine.expect(run.counters.get("ptwr_unhooks") == 0 and run.counters.get("ptwr_faults") == 0,
                       f"{run.name}: an L1 of Linux unhooked or detached: {run.counters}")
    return rows


def main():
    build, hv = guest_boot.arguments()
    with tempfile.TemporaryDirectory(prefix="pvhv-linux-traces") as out_dir:
        reports = {}
        for name in RUNS[hv.name]:
            run = trace_loop.capture(build, name, ITERATIONS, out_dir)
            trace_loop.read_with(run, build)
            rows = check(run, build)
            reports[name] = open(run.path("per-iteration.txt")).read()
            print(f"ok: {name}: {run.records} records, none lost, {ITERATIONS} iterations; per fork+execve "
                  f"{rows['mmu_update calls'][1]:.0f} mmu_update calls ({rows['mmu_update entries'][1]:.0f} entries), "
                  f"{rows['emulated PTE writes'][1]:.1f} emulated PTE writes; counters {run.counters}")
        print("\n".join(trace_loop.per_fork_table(reports)))


if __name__ == "__main__":
    main()
