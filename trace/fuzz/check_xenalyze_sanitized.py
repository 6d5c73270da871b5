#!/usr/bin/env python3
"""The xenalyze binary itself, built with ASan and UBSan (float-cast-overflow and
float-divide-by-zero included, every report fatal: build/bin/xenalyze_sanitized), on corrupt
traces and bad options.

Traces: the seed corpus trace_make_seeds made from real traces (Xen 4.17's fixture and ours in
trace/fixtures/): truncated, bit-flipped, TSCs jumping by 2^63 or going backwards, absurd
counts. Each runs through every report at once, through --json-steps, at the smallest and the
largest --cpu-hz accepted, and compared with another. A trace may be refused (exit 2, foreign)
or reported as damaged (exit 3 with --strict); it must never trip a sanitizer, crash or hang.

Options: bad values (NaN, infinities, 1e13G, negative, empty, hex, trailing junk, out of range
for --fork) are refused with a message on stderr and exit status 1, also under the sanitizers.

Usage: check_xenalyze_sanitized.py --xenalyze build/bin/xenalyze_sanitized --seeds DIR --fixture TRACE
       (TRACE: a good trace, for the option checks)
"""
import argparse
import os
import subprocess
import sys
import tempfile

SANITIZER_ENV = {
    "ASAN_OPTIONS": "halt_on_error=1:abort_on_error=0:detect_leaks=1:exitcode=86",
    "UBSAN_OPTIONS": "halt_on_error=1:print_stacktrace=1:exitcode=87",
}
SANITIZER_MARKS = ("runtime error:", "AddressSanitizer", "LeakSanitizer", "UndefinedBehaviorSanitizer")
TRACE_STATUSES = (0, 2, 3)   # fine; foreign file; --strict and the trace had errors

BAD_CPU_HZ = ["nan", "NaN", "inf", "-inf", "infinity", "1e13G", "1e400", "1e-400", "-1", "-2.4G", "0", "0.0",
              "0.5", "999", "1e12001", "2.4X", "2.4GG", "0x10", " 2.4G", "2.4G ", "", "G", ".", "e9", "1e13",
              "1001G", "18446744073709551616"]
GOOD_CPU_HZ = ["1000", "1K", "2.4G", "1000G", "1e12"]
BAD_FORK = ["-1", "99999999999999999999999", "", "1.5", "0x1", "one", " 1"]


def run(xenalyze, args, timeout=120):
    env = dict(os.environ, **SANITIZER_ENV)
    try:
        result = subprocess.run([xenalyze, *args], capture_output=True, text=True, errors="replace",
                                env=env, timeout=timeout)
    except subprocess.TimeoutExpired:
        return None
    return result


def sanitizer_report(result):
    return next((mark for mark in SANITIZER_MARKS if mark in result.stderr), None)


class Checker:
    def __init__(self, xenalyze):
        self.xenalyze = xenalyze
        self.failures = []
        self.runs = 0

    def fail(self, args, why, result=None):
        detail = ""
        if result is not None:
            detail = "\n" + "\n".join(result.stderr.splitlines()[:25])
        self.failures.append(f"xenalyze {' '.join(args)}: {why}{detail}")

    def trace_run(self, args):
        self.runs += 1
        result = run(self.xenalyze, args)
        if result is None:
            return self.fail(args, "timed out (a hang)")
        if mark := sanitizer_report(result):
            return self.fail(args, f"sanitizer report ({mark})", result)
        if result.returncode not in TRACE_STATUSES:
            return self.fail(args, f"exit status {result.returncode}", result)

    def option_refused(self, args, fixture):
        self.runs += 1
        result = run(self.xenalyze, [*args, fixture])
        if result is None:
            return self.fail(args, "timed out")
        if mark := sanitizer_report(result):
            return self.fail(args, f"sanitizer report ({mark})", result)
        if result.returncode != 1 or not result.stderr.strip():
            return self.fail(args, f"accepted (exit {result.returncode}, stderr {result.stderr.strip()[:80]!r})")
        if result.stdout.strip():
            return self.fail(args, "printed a report for a bad option")

    def option_accepted(self, args, fixture):
        self.runs += 1
        result = run(self.xenalyze, [*args, fixture])
        if result is None or result.returncode != 0 or sanitizer_report(result):
            return self.fail(args, "a good option was refused or failed", result)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--xenalyze", required=True)
    parser.add_argument("--seeds", required=True)
    parser.add_argument("--fixture", required=True, help="a good trace, for the option checks")
    args = parser.parse_args()
    seeds = sorted(os.path.join(args.seeds, name) for name in os.listdir(args.seeds))
    if len(seeds) < 10:
        sys.exit(f"FAIL: only {len(seeds)} seeds in {args.seeds}")
    check = Checker(args.xenalyze)
    with tempfile.TemporaryDirectory() as svg:
        for seed in seeds:
            everything = ["--summary", "--dump-all", "--report-pcpu", "--stats", "--forks", "--ptes-per-table", "--per-iteration",
                          f"--svg={svg}", "--strict", "--verbose"]
            check.trace_run([*everything, seed])
            check.trace_run(["--json-steps", seed])
            check.trace_run(["--cpu-hz=1000", "--dump-all", "--stats", "--forks", "--summary", seed])
            check.trace_run(["--cpu-hz=1000G", "--json", seed])
            check.trace_run(["--compare", seeds[0], seed])
    fixture = args.fixture
    with tempfile.TemporaryDirectory() as svg:
        for value in BAD_CPU_HZ:
            check.option_refused([f"--cpu-hz={value}", "--summary"], fixture)
        check.option_refused(["--summary", "--cpu-hz"], fixture)  # no value: the file is taken for it
        for value in BAD_FORK + ["18446744073709551615"]:  # the last: more operations than the trace has
            check.option_refused([f"--fork={value}", f"--svg={svg}"], fixture)
        for bad in (["--svg="], ["--bogus"], ["--summary=yes"], ["--compare"]):
            check.option_refused(bad, fixture)
        for value in GOOD_CPU_HZ:
            check.option_accepted([f"--cpu-hz={value}", "--summary"], fixture)
    if check.failures:
        print("\n\n".join(check.failures))
        sys.exit(f"FAIL: {len(check.failures)} of {check.runs} runs of {args.xenalyze}")
    print(f"ok: {check.runs} runs of {args.xenalyze} on {len(seeds)} corrupt or real traces and bad options: "
          "no sanitizer report, bad options refused")


if __name__ == "__main__":
    main()
