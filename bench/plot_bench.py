#!/usr/bin/python3
"""`make bench`'s pictures, drawn from what the bench wrote, next to it:

  - plot-<benchmark>.png for each benchmark of results.json: one bar per column that measured it
    (our modes and the Xen 4.17 columns, in the bench's order), its figure on the bar, and on each
    of our bars its ratios to the matching Xen columns (the bench's own `xen_ratios`);
  - profile-<benchmark>.png for each benchmark of a profile.json (bench/run_profile.py): per
    mode, the functions that ran the most instructions per operation, coloured by where they run;
  - plots.json: what each picture shows (its columns and figures, or its functions), so a reader
    or a test can check a picture against the numbers without looking at pixels.

Debian's matplotlib (python3-matplotlib, installed by scripts/install-deps.sh) lives beside
Debian's Python, so this script runs under /usr/bin/python3 (PLOT_PYTHON), whatever `python3` is.

    /usr/bin/python3 bench/plot_bench.py [--results build/bench/results.json] [--profile build/bench/profile.json]
"""
import argparse
import json
import os
import sys

PLOT_PYTHON = "/usr/bin/python3"
OURS_COLOURS = {"writable": "#1f77b4", "emulate": "#2ca02c", "hypercall": "#17becf", "batched": "#9467bd",
                "adaptive": "#8c564b"}
XEN_COLOURS = {"xen417": "#ff7f0e", "xen417-nopti": "#ffbb78", "xen417-hypercall": "#d6616b",
               "xen417-batched": "#e7969c"}
REGION_COLOURS = {"hypervisor": "#d62728", "kernel": "#1f77b4", "user": "#7f7f7f"}
TOP_FUNCTIONS = 15


def draw(args):
    """Draws from another Python (the bench's own, which may not be Debian's): this script under
    PLOT_PYTHON with `args`. Returns its exit status; says in one line why when it fails."""
    import subprocess
    result = subprocess.run([PLOT_PYTHON, os.path.abspath(__file__), *args], capture_output=True, text=True)
    print((result.stdout + result.stderr).strip(), flush=True)
    return result.returncode


def colour(mode, hypervisor):
    if hypervisor != "ours":
        return XEN_COLOURS.get(mode, "#ff7f0e")
    return OURS_COLOURS.get(mode.replace("-untraced", ""), "#7f7f7f")


def benchmark_figures(document):
    """One figure per benchmark that some column measured: its label, unit and columns in the
    order of the bench's modes, each with its figure and, for ours, the ratio to Xen's."""
    order = list(document["metadata"]["modes"])
    ratios = {}
    for r in document.get("xen_ratios", []):
        if r.get("ratio") is not None:
            ratios.setdefault((r["benchmark"], r["mode"]), []).append({"xen": r["xen"], "ratio": r["ratio"]})
    figures = {}
    for r in document["results"]:
        if r.get("status") != "ok" or r.get("per_op") is None:
            continue
        figure = figures.setdefault(r["benchmark"], {"benchmark": r["benchmark"], "label": r["label"],
                                                      "unit": r["unit"], "columns": []})
        figure["columns"].append({"mode": r["mode"], "hypervisor": r["hypervisor"], "value": r["per_op"],
                                  "ratios": ratios.get((r["benchmark"], r["mode"]), [])})
    for figure in figures.values():
        figure["columns"].sort(key=lambda c: order.index(c["mode"]) if c["mode"] in order else len(order))
    return [figures[b] for b in sorted(figures, key=lambda b: min(
        (i for i, r in enumerate(document["results"]) if r["benchmark"] == b)))]


def profile_figures(profile):
    """One figure per profiled benchmark: per mode, its most expensive functions per operation."""
    figures = {}
    for run in profile["runs"]:
        figure = figures.setdefault(run["benchmark"], {"benchmark": run["benchmark"], "modes": []})
        figure["modes"].append({"mode": run["mode"], "instructions_per_op": run["instructions_per_op"],
                                "functions": run["functions"][:TOP_FUNCTIONS]})
    return list(figures.values())


def time_base(document):
    if document["metadata"].get("deterministic"):
        return "deterministic: QEMU TCG -icount shift=0, 1 ns of virtual time per guest instruction"
    return "host-paced QEMU TCG (not deterministic)"


def draw_benchmark(plt, figure, subtitle, path):
    columns = figure["columns"]
    names = [c["mode"] for c in columns]
    values = [c["value"] for c in columns]
    fig, ax = plt.subplots(figsize=(max(6.0, 1.3 * len(columns) + 2), 4.8), dpi=100)
    bars = ax.bar(range(len(columns)), values, color=[colour(c["mode"], c["hypervisor"]) for c in columns])
    top = max(values)
    for bar, column in zip(bars, columns):
        text = f"{column['value']:,.1f}"
        for ratio in column["ratios"]:
            text += f"\n{ratio['ratio']:.2f}x {ratio['xen'].replace('xen417-', 'x-')}"
        ax.text(bar.get_x() + bar.get_width() / 2, bar.get_height() + top * 0.01, text, ha="center",
                va="bottom", fontsize=8)
    ax.set_xticks(range(len(columns)), names, rotation=30, ha="right", fontsize=9)
    ax.set_ylabel(figure["unit"])
    ax.set_ylim(0, top * 1.3)
    ax.set_title(f"{figure['label']} ({figure['unit']}; lower is better; x-NAME: the column xen417-NAME)\n{subtitle}",
                 fontsize=10)
    ax.grid(axis="y", color="#dddddd")
    ax.set_axisbelow(True)
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)


def draw_profile(plt, figure, path):
    modes = figure["modes"]
    # One scale for every mode: the bars compare across the panels.
    fig, axes = plt.subplots(1, len(modes), figsize=(7.5 * len(modes), 6.0), dpi=100, squeeze=False, sharex=True)
    for ax, mode in zip(axes[0], modes):
        functions = list(reversed(mode["functions"]))
        ax.barh(range(len(functions)), [f["per_op"] for f in functions],
                color=[REGION_COLOURS.get(f["where"], "#7f7f7f") for f in functions])
        ax.set_yticks(range(len(functions)), [f["name"][:48] for f in functions], fontsize=8)
        ax.set_xlabel("instructions per operation")
        ax.set_title(f"{mode['mode']}: {mode['instructions_per_op']:,.0f} instructions per {figure['benchmark']}",
                     fontsize=10)
        ax.grid(axis="x", color="#dddddd")
        ax.set_axisbelow(True)
    handles = [plt.Rectangle((0, 0), 1, 1, color=c) for c in REGION_COLOURS.values()]
    fig.legend(handles, list(REGION_COLOURS), loc="upper right", fontsize=8, ncol=3)
    fig.suptitle(f"where the instructions of {figure['benchmark']} go (QEMU TCG plugin, -icount shift=0)",
                 fontsize=11)
    fig.tight_layout(rect=(0, 0, 1, 0.95))
    fig.savefig(path)
    plt.close(fig)


def pyplot():
    try:
        import matplotlib
    except ImportError:
        raise SystemExit(f"plot_bench: no matplotlib for {sys.executable} (Debian's python3-matplotlib: "
                         f"run it with {PLOT_PYTHON}, after scripts/install-deps.sh)")
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    return plt


def load_input(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError) as e:
        raise SystemExit(f"plot_bench: {path}: {e}")


def checked(figures, document, path):
    """The figures of a document, or one line saying what the document lacks."""
    try:
        return figures(document)
    except (KeyError, TypeError, AttributeError) as e:
        raise SystemExit(f"plot_bench: {path}: not what the bench writes ({type(e).__name__}: {e})")


def load_index(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError):
        return {"benchmarks": [], "profiles": []}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--results", help="a results.json bench/run_bench.py wrote")
    parser.add_argument("--profile", help="a profile.json bench/run_profile.py wrote")
    parser.add_argument("--out-dir", help="default: the folder of the first file given")
    args = parser.parse_args(argv)
    if not args.results and not args.profile:
        parser.error("nothing to draw: give --results and/or --profile")
    out_dir = args.out_dir or os.path.dirname(os.path.abspath(args.results or args.profile))
    plt = pyplot()
    # Each input redraws its own section of the index; the other section stays as it was.
    index_path = os.path.join(out_dir, "plots.json")
    index = load_index(index_path)
    drawn = []
    if args.results:
        document = load_input(args.results)
        index["benchmarks"] = []
        for figure in checked(benchmark_figures, document, args.results):
            path = os.path.join(out_dir, f"plot-{figure['benchmark']}.png")
            draw_benchmark(plt, figure, time_base(document), path)
            index["benchmarks"].append(dict(figure, file=os.path.basename(path)))
            drawn.append(path)
    if args.profile:
        profile = load_input(args.profile)
        index["profiles"] = []
        for figure in checked(profile_figures, profile, args.profile):
            path = os.path.join(out_dir, f"profile-{figure['benchmark']}.png")
            draw_profile(plt, figure, path)
            index["profiles"].append(dict(figure, file=os.path.basename(path)))
            drawn.append(path)
    with open(index_path, "w") as f:
        json.dump(index, f, indent=2)
        f.write("\n")
    print(f"plots: {len(drawn)} pictures in {out_dir}: {', '.join(os.path.basename(p) for p in drawn)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
