#!/usr/bin/env python3
"""What a domain's life costs the control domain: `make bench`'s lifecycle table. dom0 runs
selftest=lifecycle-100 (guest/kernel/selftest_lifecycle.cpp): 100 x createdomain (PV, no
memory), max_vcpus 1, destroydomain, timed with the guest's clock, on ours (both ptwr= modes)
and on Xen 4.17, under -icount shift=0 (1 ns of virtual time per guest instruction: exact and
repeatable, not hardware time). The self-test also checks free pages and the domain count back
at their baseline, so a figure comes only from a run that left nothing behind.

    python3 bench/run_lifecycle_bench.py [--build build] [--output build/bench/lifecycle.json]
"""
import argparse
import json
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(ROOT, "tests", "integration"))
import guest_boot  # noqa: E402
import machine  # noqa: E402

PER_CYCLE = re.compile(r"selftest lifecycle-100: \.\.\. microseconds per cycle: (\d+) ")
CYCLES = re.compile(r"selftest lifecycle-100: create/max_vcpus/destroy cycles: (\d+) ")
COLUMNS = [("ours", "ptwr=emulate", "ours emulate"), ("ours", "ptwr=writable", "ours writable"), ("xen417", "", "xen417")]


def parse(serial):
    """(cycles, microseconds per cycle, passed) from the self-test's lines, None where missing."""
    lines = serial
    cycles = CYCLES.search(lines)
    per_cycle = PER_CYCLE.search(lines)
    passed = "selftest lifecycle-100: passed" in lines and ": FAIL" not in lines
    return (int(cycles.group(1)) if cycles else None, int(per_cycle.group(1)) if per_cycle else None, passed)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--build", default=os.path.join(ROOT, "build"))
    parser.add_argument("--output", default=None)
    args = parser.parse_args(argv)
    build = os.path.abspath(args.build)
    rows, ok = [], True
    for name, hypervisor_args, label in COLUMNS:
        hv = guest_boot.hypervisor(build, name)
        modules = [(os.path.join(build, "guest", "kernel"), "selftest=lifecycle-100"),
                   (os.path.join(build, "guest", "initrd.cpio"), "")]
        result = machine.boot(hv.image, f"{hv.append} {hypervisor_args}".strip(), modules, timeout=600,
                              until=None if hv.ends_itself else hv.poweroff, memory="512M", extra=("-icount", "shift=0"))
        cycles, per_cycle, passed = parse(result.serial)
        ok = ok and passed and per_cycle is not None
        rows.append({"column": label, "cycles": cycles, "us_per_cycle": per_cycle, "passed": passed})
    print("domain lifecycle: createdomain + max_vcpus + destroydomain, dom0's view (TCG virtual time, -icount shift=0)")
    for row in rows:
        figure = "FAILED" if not row["passed"] or row["us_per_cycle"] is None else f"{row['us_per_cycle']} us/cycle"
        print(f"  {row['column']:<14} {figure} ({row['cycles']} cycles, baseline restored: {row['passed']})")
    output = args.output or os.path.join(build, "bench", "lifecycle.json")
    os.makedirs(os.path.dirname(output), exist_ok=True)
    with open(output, "w") as f:
        json.dump({"time_base": "guest clock under -icount shift=0: 1 ns per guest instruction", "rows": rows}, f, indent=2)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
