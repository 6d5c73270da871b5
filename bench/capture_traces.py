"""`make run`, after the benchmark table: captures a trace of the fork benchmarks in each
PTE-write mode (the guest streams the hypervisor's trace buffers over COM2, trace=capture),
turns the streams into xentrace files in build/run/, and prints what a reader needs of what
xenalyze says: per mode, how the PTE writes were taken over and what each step cost; then the
two traces side by side on the records that tell the paths apart. xenalyze's whole answers
(every record type) go to build/run/<mode>.stats.txt and build/run/compare.txt, SVG plots to
build/run/svg-<mode>/.

Iterations are few: the point is the sequence of faults, unhooks, rehooks and flushes each
fork produces, not the timing (make bench measures that).
"""
import argparse
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tests", "integration", "lib"))
import machine  # noqa: E402

MODES = ("writable", "emulate")
BENCH_ARGS = "--only fork_exit,dirty64_fork_exit --iterations 2"


def capture(build, out_dir, mode):
    stream = os.path.join(out_dir, f"{mode}.stream")
    trace = os.path.join(out_dir, f"{mode}.trace")
    kernel = os.path.join(build, "guest", "kernel")
    initrd = os.path.join(build, "guest", "initrd.cpio")
    boot = machine.boot(machine.ours(build), f"loglvl=info dom0_mem=256M ptwr={mode}",
                        [(kernel, f"pte=direct trace=capture init=/bench -- {BENCH_ARGS}"), (initrd, "")],
                        timeout=300, extra=("-serial", f"file:{stream}"))
    with open(os.path.join(out_dir, f"{mode}.console.log"), "w") as log:
        log.write(boot.serial)
    if boot.debug_exit_value() != 0 or "bench done" not in boot.serial:
        print(f"capture ({mode}): the run failed, see {out_dir}/{mode}.console.log")
        return None
    subprocess.run([os.path.join(build, "bin", "xentrace"), "--quiet", f"--input={stream}", trace], check=True)
    return trace


def xenalyze(build, *args):
    return subprocess.run([os.path.join(build, "bin", "xenalyze"), *args], capture_output=True, text=True).stdout


# The sections of `xenalyze --stats` printed per mode (the rest is in the file).
STATS_SECTIONS = ("Page faults", "Paired costs")
# The rows of `xenalyze --compare` that tell the two paths apart.
COMPARE_ROWS = ("metric", "seconds traced", "ptwr_unhook ", "ptwr_rehook ", "tlb_flush ", "invlpg ",
                "pte_write_fault ", "pv_ptwr_emulation ", "pv_page_fault ", "fault->emulation", "unhook->rehook",
                "operation avg")


def sections(text, wanted):
    """The `--- name ---` sections of xenalyze's text whose name starts with one of `wanted`."""
    kept, keep = [], False
    for line in text.splitlines():
        if line.startswith("--- "):
            keep = line[4:].startswith(wanted)
        if keep:
            kept.append(line)
    return "\n".join(kept)


def rows(text, wanted):
    return "\n".join(line for line in text.splitlines() if line.strip().startswith(wanted))


def save(path, text):
    with open(path, "w") as f:
        f.write(text)
    return path


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--build", default=os.path.join(ROOT, "build"))
    args = parser.parse_args()
    out_dir = os.path.join(args.build, "run")
    os.makedirs(out_dir, exist_ok=True)
    traces = {mode: capture(args.build, out_dir, mode) for mode in MODES}
    for mode, trace in traces.items():
        if not trace:
            continue
        stats = xenalyze(args.build, "--stats", trace) + xenalyze(args.build, "--ptes-per-table", trace)
        saved = save(os.path.join(out_dir, f"{mode}.stats.txt"), stats)
        print(f"\n=== trace of the fork benchmarks, ptwr={mode} ({trace}; every record type: {saved}) ===")
        print(sections(stats, STATS_SECTIONS))
        xenalyze(args.build, f"--svg={os.path.join(out_dir, 'svg-' + mode)}", trace)
    if all(traces.values()):
        compare = xenalyze(args.build, "--compare", traces["writable"], traces["emulate"])
        saved = save(os.path.join(out_dir, "compare.txt"), compare)
        print(f"\n=== writable (A) vs emulate (B): the records that tell them apart (all: {saved}) ===")
        print(rows(compare, COMPARE_ROWS))
    return 0


if __name__ == "__main__":
    sys.exit(main())
