#!/usr/bin/env python3
"""Where the instructions go: `make profile` runs chosen benchmarks of /bench in chosen modes
(bench/run_bench.py's, ours and Xen 4.17) under QEMU with the project's TCG plugin
(bench/profiler/pvhv_profile.c), counts every instruction inside the timed window per
address, names the addresses and prints, per mode, instructions per operation by function
(hypervisor, guest kernel, guest user) and the events per operation: traps and interrupts
into the hypervisor, syscall instructions of the guest kernel (hypercalls) and of guest user
code, CR3 writes and invlpg. The numbers go to <build>/bench/profile.json, and a picture per
benchmark (profile-<benchmark>.png) beside it (bench/plot_bench.py).

    python3 bench/run_profile.py --modes emulate,xen417 --benchmarks fork_exit,pte_write [--top 25]

Deterministic (-icount shift=0): the counts are exact and repeatable; the plugin does not
change the guest's virtual time. Our hypervisor and guest are named from their ELF symbols
(nm). Xen 4.17's image is stripped; its functions are named from the symbol table Xen embeds
for its own backtraces (bench/xen_symbols.py), and shown as offsets when that fails.
"""
import argparse
import bisect
import json
import os
import re
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(ROOT, "tests", "integration", "lib"))
sys.path.insert(0, HERE)
import machine  # noqa: E402
import plot_bench  # noqa: E402
import run_bench  # noqa: E402
import xen_symbols  # noqa: E402

MARKER = "kernel::sys_pvhv_counters(unsigned long)"  # opens and closes /bench's timed windows
USER_HIGH = 0x0000800000000000
HYPERVISOR = (0xFFFF800000000000, 0xFFFF880000000000)
EVENTS = [("traps", "traps+interrupts"), ("kernel_syscalls", "hypercalls (kernel syscall)"),
          ("user_syscalls", "user syscalls"), ("cr3_writes", "CR3 writes"), ("invlpgs", "invlpg")]


class Symbols:
    """Address -> function name, from (address, name) pairs; None outside every function."""

    def __init__(self, pairs):
        pairs = sorted(pairs)
        self.addresses = [a for a, _ in pairs]
        self.names = [n for _, n in pairs]

    def name(self, address):
        return self.lookup(address)[1]

    def lookup(self, address):
        """(the function's first address, its name), or (None, None) outside every function."""
        i = bisect.bisect_right(self.addresses, address) - 1
        return (self.addresses[i], self.names[i]) if i >= 0 else (None, None)


def elf_symbols(path):
    """Function symbols of an ELF with a symbol table (ours: the hypervisor, the guest kernel)."""
    out = subprocess.run(["nm", "-n", "-C", "--defined-only", path], capture_output=True, text=True,
                         check=True).stdout
    pairs = []
    for line in out.splitlines():
        parts = line.split(" ", 2)
        if len(parts) == 3 and parts[1] in "tTwW":
            pairs.append((int(parts[0], 16), short_name(parts[2])))
    return pairs


def short_name(demangled, width=90):
    """A demangled C++ name without its parameter list (the last balanced parentheses, and a
    trailing const or clone suffix), cut to `width`: `kernel::(anonymous namespace)::f(int)`
    becomes `kernel::(anonymous namespace)::f`."""
    name = re.sub(r"( const)?( \[clone [^]]*\])*$", "", demangled)
    if name.endswith(")"):
        depth = 0
        for i in range(len(name) - 1, -1, -1):
            depth += {")": 1, "(": -1}.get(name[i], 0)
            if depth == 0:
                name = name[:i]
                break
    return name if len(name) <= width else name[:width - 3] + "..."


def read_profile(path):
    totals, counts = {}, {}
    with open(path) as f:
        for line in f:
            words = line.split()
            if words[0] == "pc":
                counts[int(words[1], 16)] = int(words[2])
            elif len(words) == 2:
                totals[words[0]] = int(words[1])
    return totals, counts


def region(address):
    if address < USER_HIGH:
        return "user"
    if HYPERVISOR[0] <= address < HYPERVISOR[1]:
        return "hypervisor"
    return "kernel"


def run(build, mode, benchmark, iterations, plugin, marker, timeout):
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "profile.txt")
        image = os.path.join(build, "xen", mode.image) if mode.hypervisor == "ours" else machine.xen417(build)
        count = f"--pte-writes {iterations}" if benchmark == "pte_write" else f"--iterations {iterations}"
        guest = f"{mode.guest_args} init=/bench -- --only {benchmark} {count}"
        modules = [(os.path.join(build, "guest", "kernel"), guest), (os.path.join(build, "guest", "initrd.cpio"), "")]
        extra = ("-icount", "shift=0", "-plugin", f"{plugin},marker={marker:#x},out={out}")
        until = None if mode.hypervisor == "ours" else "bench done"
        result = machine.boot(image, mode.hypervisor_args, modules, timeout=timeout, until=until, extra=extra)
        parsed = run_bench.parse_output(result.serial)
        bench = parsed.results.get(benchmark)
        if not os.path.exists(out):
            # Xen's machine is killed at "bench done": QEMU's atexit still runs the plugin's.
            raise SystemExit(f"profile: {mode.name}: the plugin wrote nothing (boot: {result.seconds:.0f} s)")
        totals, counts = read_profile(out)
    if bench is None or bench.status != "ok":
        raise SystemExit(f"profile: {mode.name}: {benchmark} did not run")
    return bench, totals, counts


def summary(mode, benchmark, bench, totals, counts, names, top):
    """One profiled run as numbers: instructions per operation in all and by region, events per
    operation, and the `top` functions (where, name, instructions per operation, share)."""
    ops = bench.iterations
    by_function, by_region, starts = {}, {}, {}
    for address, count in counts.items():
        where = region(address)
        start, name = names[where](address) if where != "user" else (None, "(user code)")
        key = (where, name or f"{address:#x}")
        by_function[key] = by_function.get(key, 0) + count
        by_region[where] = by_region.get(where, 0) + count
        if start is not None:
            starts.setdefault(key, set()).add(start)
    # A function's entries: how often its first instruction ran (every call, and any jump back
    # to it, which compiled functions rarely make: their first instruction is the prologue's).
    entries = {key: sum(counts.get(start, 0) for start in addresses) for key, addresses in starts.items()}
    total = sum(counts.values())
    hottest = sorted(by_function.items(), key=lambda item: -item[1])[:top]
    return {"mode": mode.name, "benchmark": benchmark, "operations": ops, "ns_per_op": bench.ns_per_op,
            "instructions_per_op": total / ops,
            "regions_per_op": {where: by_region.get(where, 0) / ops for where in ("hypervisor", "kernel", "user")},
            "events_per_op": {key: totals.get(key, 0) / ops for key, _ in EVENTS},
            "functions": [{"where": where, "name": name, "per_op": count / ops, "share": count / total,
                           "entries_per_op": entries.get((where, name), 0) / ops}
                          for (where, name), count in hottest]}


def report(run):
    lines = [f"{run['mode']} {run['benchmark']}: {run['operations']} operations, "
             f"{run['instructions_per_op']:,.0f} instructions per operation (timed: {run['ns_per_op']:,.0f} ns/op)"]
    lines.append("  " + ", ".join(f"{where} {per_op:,.0f}" for where, per_op in run["regions_per_op"].items()))
    lines.append("  events per operation: " + ", ".join(f"{label} {run['events_per_op'][key]:.2f}" for key, label in EVENTS))
    lines.append(f"  {'instructions/op':>15}  {'share':>6}  {'entries/op':>10}  {'per entry':>9}  where       function")
    for f in run["functions"]:
        calls = f["entries_per_op"]
        each = f"{f['per_op'] / calls:9,.1f}" if calls else f"{'-':>9}"
        lines.append(f"  {f['per_op']:15,.1f}  {100.0 * f['share']:5.1f}%  {calls:10,.2f}  {each}  "
                     f"{f['where']:<10}  {f['name']}")
    return "\n".join(lines)


def write_profile(path, runs):
    """profile.json beside the bench's results, and its pictures (bench/plot_bench.py)."""
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        json.dump({"metadata": {"git": run_bench.git_state(), "icount": "-icount shift=0"}, "runs": runs}, f, indent=2)
        f.write("\n")
    return plot_bench.draw(["--profile", path])


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--build", default=os.path.join(ROOT, "build"))
    parser.add_argument("--modes", default="emulate,xen417")
    parser.add_argument("--benchmarks", default="fork_exit,pte_write")
    parser.add_argument("--iterations", type=int, default=20, help="per fork benchmark (pte_write: 1000 times as many writes)")
    parser.add_argument("--top", type=int, default=25)
    parser.add_argument("--timeout", type=float, default=600)
    parser.add_argument("--output", help="the profile's JSON (default: <build>/bench/profile.json; "
                        "its pictures beside it)")
    args = parser.parse_args(argv)
    build = os.path.abspath(args.build)
    plugin = os.path.join(build, "bench", "libpvhv_profile.so")
    kernel_pairs = elf_symbols(os.path.join(build, "guest", "kernel"))
    marker = next((a for a, n in kernel_pairs if n == MARKER.split("(")[0]), None)
    if marker is None or not os.path.exists(plugin):
        raise SystemExit("profile: build first (the plugin or the guest kernel's marker is missing)")
    kernel = Symbols(kernel_pairs).lookup
    # Each of our images names its own addresses: xen-untraced is laid out differently.
    ours_by_image = {}

    def ours(image):
        if image not in ours_by_image:
            ours_by_image[image] = Symbols(elf_symbols(os.path.join(build, "xen", image))).lookup
        return ours_by_image[image]
    xen_pairs = xen_symbols.read(machine.xen417(build))
    xen = Symbols(xen_pairs).lookup if xen_pairs else (lambda address: (None, None))
    runs = []
    for name in args.modes.split(","):
        mode = run_bench.MODES[name]
        names = {"kernel": kernel, "hypervisor": ours(mode.image) if mode.hypervisor == "ours" else xen}
        for benchmark in args.benchmarks.split(","):
            iterations = args.iterations * (1000 if benchmark == "pte_write" else 1)
            bench, totals, counts = run(build, mode, benchmark, iterations, plugin, marker, args.timeout)
            runs.append(summary(mode, benchmark, bench, totals, counts, names, args.top))
            print(report(runs[-1]), flush=True)
            print()
    return 0 if write_profile(args.output or os.path.join(build, "bench", "profile.json"), runs) == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
