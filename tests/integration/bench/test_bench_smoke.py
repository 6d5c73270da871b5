"""The fork benchmark suite end to end, small: /bench as init on our hypervisor in pte=hypercall
mode with tiny iteration counts. Every benchmark must report, with counters, and the machine
must end cleanly (bench done, audit clean, exit value 0). Asserts no speed: `make bench`
measures.
"""
import argparse
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "lib"))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(HERE))), "bench"))
import machine  # noqa: E402
import run_bench  # noqa: E402


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--build", default=None)
    parser.add_argument("--hypervisor", default="ours")  # accepted, ours only
    parser.add_argument("--mode", default="hypercall", choices=sorted(run_bench.MODES))
    args = parser.parse_args()
    build = os.path.abspath(machine.build_dir(args.build))
    mode = run_bench.MODES[args.mode]
    run = run_bench.run_mode(mode, build, 0.02, ["--warmup", "1", "--pte-writes", "2000"],
                             deterministic=False, timeout=240)
    print(run_bench.report_text([run], deterministic=False), end="")
    if not run.ok:
        print(f"---- console ({run.qemu_command}) ----")
        print(run.serial)
        raise SystemExit(f"FAIL: mode {mode.name}: " + "; ".join(run.problems))
    for name in run_bench.BENCHMARK_NAMES:
        result = run.parsed.results[name]
        machine.expect(result.status == "ok" and result.iterations > 0 and result.total_ns > 0,
                       f"{name}: not measured")
        machine.expect(result.counters_status == "ok", f"{name}: no counters")
    fork = run.parsed.results["fork_exit"]
    if mode.guest_args == "pte=hypercall":
        machine.expect(fork.counters["mmu_hypercalls"] > 0,
                       "fork_exit in pte=hypercall mode issued no MMU hypercall")
    print(f"ok: every fork benchmark reported in mode {mode.name} ({run.seconds:.1f} s)")


if __name__ == "__main__":
    main()
