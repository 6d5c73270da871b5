"""The instruction profiler (bench/run_profile.py, the QEMU plugin bench/profiler/pvhv_profile.c,
Xen's embedded symbols bench/xen_symbols.py) on real boots of ours and of Xen 4.17.

Under -icount shift=0 the guest's clock advances one nanosecond per instruction, so the
instructions the plugin counted inside the timed window must match the time /bench measured
for it (a window that opened late, closed early or counted twice would not); an emulated PTE
write is one trap, one entry into the emulation and no CR3 write on ours, and a fork+exit writes CR3 and enters the
hypervisor by syscall (hypercalls) more often than by traps. Names come from our ELF symbols and
from the symbol table Xen 4.17 embeds in its stripped image. The runs' profile.json and its
pictures (bench/plot_bench.py) show the same functions as the runs counted, and the cost model
(bench/cost_model.py) gives Xen 4.17's column a modelled figure from the profile's events, only
when the profile is of the same commit as the results.
"""
import json
import os
import struct
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "lib"))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(HERE))), "bench"))
import guest_boot  # noqa: E402
import machine  # noqa: E402
import cost_model  # noqa: E402
import run_bench  # noqa: E402
import run_profile  # noqa: E402
import xen_symbols  # noqa: E402


def profiled(build, mode, benchmark, iterations, plugin, marker):
    bench, totals, counts = run_profile.run(build, run_bench.MODES[mode], benchmark, iterations, plugin, marker, 300)
    counted = sum(counts.values())
    window_ns = bench.total_ns
    # The window also holds the end of one counter system call and the start of the next:
    # a few hundred instructions per window, never more than 1% of it here.
    machine.expect(abs(counted - window_ns) <= max(2000 * totals["windows"], window_ns // 100),
                   f"{mode} {benchmark}: {counted} instructions counted in a window of {window_ns} ns")
    machine.expect(totals["instructions"] == counted, f"{mode} {benchmark}: totals disagree with the sites")
    return bench, totals, counts


def pictures(runs):
    """profile.json and a picture per benchmark, each listing what the runs counted."""
    with tempfile.TemporaryDirectory(prefix="pvhv-profile") as tmp:
        machine.expect(run_profile.write_profile(os.path.join(tmp, "profile.json"), runs) == 0, "no profile pictures")
        with open(os.path.join(tmp, "plots.json")) as f:
            drawn = {figure["benchmark"]: figure for figure in json.load(f)["profiles"]}
        machine.expect(set(drawn) == {r["benchmark"] for r in runs}, f"pictures for {sorted(drawn)}")
        for run in runs:
            shown = next(m for m in drawn[run["benchmark"]]["modes"] if m["mode"] == run["mode"])
            machine.expect(shown["functions"] == run["functions"][:len(shown["functions"])] and shown["functions"],
                           f"{run['mode']} {run['benchmark']}: the picture shows other functions than were counted")
        for figure in drawn.values():
            with open(os.path.join(tmp, figure["file"]), "rb") as f:
                head = f.read(24)
            machine.expect(head[:8] == b"\x89PNG\r\n\x1a\n", f"{figure['file']} is not a PNG")
            print(f"ok: {figure['file']} {'x'.join(map(str, struct.unpack('>II', head[16:24])))}: "
                  + ", ".join(m["mode"] for m in figure["modes"]))


def xen_modelled(run, bench):
    """Xen 4.17's pte_write column as the bench records it (a figure, no counters), modelled with
    the events its profile counted."""
    git = run_bench.git_state()
    record = {"benchmark": "pte_write", "label": "PTE write", "mode": "xen417", "status": "ok",
              "total_ns": bench.total_ns, "iterations": bench.iterations, "counters_per_op": None}
    document = {"metadata": {"deterministic": True, "git": git}, "results": [record]}
    profile = {"metadata": {"git": git}, "runs": [run]}
    row, = cost_model.model(document, profile)
    e = run["events_per_op"]
    traps = e["traps"] + e["kernel_syscalls"] + e["user_syscalls"]
    machine.expect(row["events_from"] == "profile" and row["events"]["traps"] == traps and
                   row["events"]["flushes"] == e["cr3_writes"], f"Xen's modelled row: {row}")
    c = cost_model.CONSTANTS["typical"]
    expected = row["instructions"] + c["trap"] * traps + c["flush"] * e["cr3_writes"] + c["invlpg"] * e["invlpgs"]
    machine.expect(abs(row["cycles"]["typical"] - expected) < 1e-6, f"modelled {row['cycles']}, expected {expected}")
    other = dict(profile, metadata={"git": {"commit": "0" * 40, "dirty": False}})
    stale, = cost_model.model(document, other)
    machine.expect(stale["cycles"] is None, "a profile of another commit modelled Xen's column")
    print(f"ok: Xen 4.17 pte_write modelled from its profile: {row['cycles']['typical']:,.0f} cycles per write "
          f"({traps:.2f} entries, {e['cr3_writes']:.2f} CR3 writes per write)")


def main():
    build, _ = guest_boot.arguments()
    plugin = os.path.join(build, "bench", "libpvhv_profile.so")
    kernel_pairs = run_profile.elf_symbols(os.path.join(build, "guest", "kernel"))
    marker = next(a for a, n in kernel_pairs if n == run_profile.MARKER.split("(")[0])
    ours = run_profile.Symbols(run_profile.elf_symbols(os.path.join(build, "xen", "xen")))
    kernel = run_profile.Symbols(kernel_pairs)
    runs = []

    bench, totals, counts = profiled(build, "emulate", "pte_write", 2000, plugin, marker)
    runs.append(run_profile.summary(run_bench.MODES["emulate"], "pte_write", bench, totals, counts,
                                    {"kernel": kernel.lookup, "hypervisor": ours.lookup}, 15))
    ops = bench.iterations
    # One trap per write; a timer interrupt may land inside the window too.
    machine.expect(ops <= totals["traps"] <= ops + 3, f"emulate pte_write: {totals['traps']} traps for {ops} writes")
    # The window holds the system call that runs the writes (entry, scratch tables, return):
    # a few CR3 writes for it, none per write.
    machine.expect(totals["cr3_writes"] <= 20, f"emulate pte_write: {totals['cr3_writes']} CR3 writes")
    # A function's entries are the runs of its first instruction: the emulation's once a write.
    emulation = [f for f in runs[-1]["functions"] if f["name"] == "pte_emulation::emulate"]
    machine.expect(len(emulation) == 1 and 1.0 <= emulation[0]["entries_per_op"] <= 1.01,
                   f"emulate pte_write: pte_emulation::emulate entered {emulation} times a write")
    hottest = max((c, a) for a, c in counts.items() if run_profile.region(a) == "hypervisor")[1]
    machine.expect(ours.name(hottest) is not None, f"no name for our hottest address {hottest:#x}")
    print(f"ok: ours, emulate pte_write: {totals['instructions'] / ops:.0f} instructions per write, "
          f"{totals['traps']} traps, hottest {ours.name(hottest)}")

    bench, totals, counts = profiled(build, "writable", "fork_exit", 10, plugin, marker)
    runs.append(run_profile.summary(run_bench.MODES["writable"], "fork_exit", bench, totals, counts,
                                    {"kernel": kernel.lookup, "hypervisor": ours.lookup}, 15))
    ops = bench.iterations
    machine.expect(totals["cr3_writes"] >= 2 * ops, f"writable fork_exit: {totals['cr3_writes']} CR3 writes")
    machine.expect(totals["kernel_syscalls"] > totals["traps"] > 0, f"writable fork_exit: events {totals}")
    machine.expect(totals["user_syscalls"] >= 3 * ops, f"writable fork_exit: {totals['user_syscalls']} user syscalls")
    print(f"ok: ours, writable fork_exit: {totals['cr3_writes'] / ops:.1f} CR3 writes, "
          f"{totals['kernel_syscalls'] / ops:.1f} hypercalls per fork+exit")

    xen = run_profile.Symbols(xen_symbols.read(machine.xen417(build)))
    machine.expect(len(xen.names) > 3000, f"Xen 4.17: only {len(xen.names)} functions decoded")
    machine.expect(xen.addresses == sorted(xen.addresses), "Xen 4.17's symbols are not in address order")
    machine.expect("do_mmu_update" in xen.names and "pv_ro_page_fault" in xen.names, "Xen's known functions missing")
    bench, totals, counts = profiled(build, "xen417", "pte_write", 2000, plugin, marker)
    runs.append(run_profile.summary(run_bench.MODES["xen417"], "pte_write", bench, totals, counts,
                                    {"kernel": kernel.lookup, "hypervisor": xen.lookup}, 15))
    xen_modelled(runs[-1], bench)
    ops = bench.iterations
    named = sum(c for a, c in counts.items() if run_profile.region(a) == "hypervisor" and xen.name(a))
    in_xen = sum(c for a, c in counts.items() if run_profile.region(a) == "hypervisor")
    machine.expect(in_xen > 0 and named == in_xen, f"Xen 4.17: {in_xen - named} instructions outside named functions")
    machine.expect(ops <= totals["traps"] <= ops + 3, f"xen417 pte_write: {totals['traps']} traps for {ops} writes")
    functions = {xen.name(a) for a in counts if run_profile.region(a) == "hypervisor"}
    machine.expect("x86_emulate" in functions, "Xen 4.17 emulated PTE writes without x86_emulate?")
    print(f"ok: Xen 4.17, pte_write: {in_xen / ops:.0f} hypervisor instructions per write, all in named functions, "
          f"{totals['cr3_writes'] / ops:.1f} CR3 writes (XPTI)")
    pictures(runs)


if __name__ == "__main__":
    main()
