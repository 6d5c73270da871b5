#!/usr/bin/env python3
"""What a domain's life costs the control domain: `make bench`'s lifecycle table. dom0 runs
selftest=lifecycle-100 (guest/selftest/control/selftest_lifecycle.cpp): 100 x createdomain (PV, no
memory), max_vcpus 1, destroydomain, timed with the guest's clock, on ours (both ptwr= modes)
and on Xen 4.17, under -icount shift=0 (1 ns of virtual time per guest instruction: exact and
repeatable, not hardware time). The self-test also checks free pages and the domain count back
at their baseline, so a figure comes only from a run that left nothing behind.

Then the same through libxenctrl from the host (tests/xenctrl/xc_domu_lifecycle over the relay's
bulk window, tools/PROTOCOL.md), ours (ptwr=emulate) and Xen 4.17, also under -icount shift=0,
two sessions on one machine, after it idled `--settle` seconds of the host's time (5 by default:
both hypervisors zero free memory in their idle loops, and without the wait how much of it was
zero when the builds began depended on how long each one's boot had left it idle):

  1. `--builds N`: N x (createdomain, max_vcpus, max_mem, memory map, the PV build of
     build/guest/kernel with the /forktest initrd, 32 MiB, not run; destroydomain), free pages
     back at baseline after each. The figure is dom0's virtual time inside request handling for
     the session (the relay's line "session opened (the one before: F frames served in T us)":
     from each whole request frame to its answer sent, so the relay's checks, the hypercalls with
     the hypervisor's work on behalf of the domU, and the copies of the frames written; not the
     link's transfer nor the host's time), divided by N. The session's own few requests (OPEN,
     physinfo, getinfolist) are in it.
  2. `--cycles C`: C create/destroy cycles through libxenctrl (createdomain, max_vcpus, max_mem,
     memory map, populate 256 pages, an event channel allocated in the domU and bound from
     dom0, destroydomain, dom0's port closed), each ending with free pages, dom0's event
     channels in use and the number of domains at their baseline (the program's check lines).
     The figure is dom0's serving time for that session (the relay's shutdown line) over C; it
     includes the counting after each cycle (one EVTCHNOP_status per dom0 port), which the
     table says.

    python3 bench/run_lifecycle_bench.py [--build build] [--output build/bench/lifecycle.json]
                                         [--builds 10] [--cycles 100] [--settle 5]
"""
import argparse
import json
import os
import re
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(ROOT, "tests", "integration", "lib"))
import guest_boot  # noqa: E402
import machine  # noqa: E402
import relay_run  # noqa: E402
import xenctrl_domu  # noqa: E402

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


SESSION_BEFORE = re.compile(r"relay: session opened \(the one before: (\d+) frames served in (\d+) us\)")
SESSION_AT_SHUTDOWN = re.compile(r"relay: shutdown requested .*; this session (\d+) frames served in (\d+) us")
CYCLES_SUMMARY = re.compile(r"xc_domu: cycles: (\d+) of (\d+) at baseline \(free pages (\d+), dom0 ports (\d+), "
                            r"domains (\d+)\)")
BUILDS_SUMMARY = re.compile(r"xc_domu: builds: (\d+) x create \+ build \+ destroy in ([\d.]+) s wall clock")
PAGES_WRITTEN = re.compile(r"xc_domu: build \d+: d\d+ created, built \((\d+) pages written\)")


def host_built(build, name, hypervisor_args, builds, cycles, settle):
    """One machine (relay dom0 with the bulk window, -icount shift=0): `settle` seconds of the
    host's time idle after dom0 is up, then the builds session, then the cycles session ending
    dom0. Returns a row for the table."""
    hv = guest_boot.hypervisor(build, name)
    program = relay_run.program(build, "xc_domu_lifecycle")
    kernel = os.path.join(build, "guest", "kernel")
    with tempfile.TemporaryDirectory(prefix="benchdomu") as tmp:
        initrd = os.path.join(tmp, "forktest.cpio")
        xenctrl_domu.forktest_initrd(build, initrd)
        common = [program, "--kernel", kernel, "--ramdisk", initrd, "--bench"]

        def client(socket_path, serial, window_path):
            # As a machine idles between its boot and its first domain: both hypervisors zero
            # their free memory in their idle loops, so the builds do not depend on how long
            # each one's own boot happened to leave it idle (that is the host's time).
            time.sleep(settle)
            first = relay_run.run_program(build, socket_path, common + ["--builds", str(builds)], timeout=1800,
                                          window_path=window_path)
            second = relay_run.run_program(build, socket_path, common + ["--cycles", str(cycles), "--shutdown"],
                                           timeout=3600, window_path=window_path)
            return first, second

        boot, (first, second) = relay_run.boot_relay(build, hv, "relay=com2", client, hypervisor_args=hypervisor_args,
                                                     timeout=5400, window=True, qemu_extra=("-icount", "shift=0"))
    row = {"hypervisor": name, "args": hypervisor_args, "builds": builds, "cycles": cycles}
    # Each OPEN reports the session before it; an OPEN sent again while dom0 was slow to answer
    # makes an empty one. The builds session is the one with the most frames.
    before = sorted((int(f), int(us)) for f, us in SESSION_BEFORE.findall(boot.serial))
    shutdown = SESSION_AT_SHUTDOWN.search(boot.serial)
    b = BUILDS_SUMMARY.search(first.stdout)
    c = CYCLES_SUMMARY.search(second.stdout)
    pages = PAGES_WRITTEN.search(first.stdout)
    row["builds_passed"] = first.returncode == 0 and b is not None and bool(before) and before[-1][0] > 0
    row["cycles_passed"] = second.returncode == 0 and c is not None and int(c.group(1)) == cycles
    if row["builds_passed"]:
        frames, us = before[-1]
        row.update(build_frames=frames, build_us_total=us, build_us_each=us // builds,
                   pages_written=int(pages.group(1)) if pages else None,
                   build_wall_s_each=float(b.group(2)) / builds)
    if row["cycles_passed"] and shutdown:
        row.update(cycle_frames=int(shutdown.group(1)), cycle_us_each=int(shutdown.group(2)) // cycles,
                   at_baseline=int(c.group(1)), free_pages=int(c.group(3)), dom0_ports=int(c.group(4)),
                   domains=int(c.group(5)))
    if not (row["builds_passed"] and row["cycles_passed"]):
        print(first.stdout[-3000:], first.stderr[-2000:], second.stdout[-3000:], second.stderr[-2000:], sep="\n")
    return row


def print_host_built(rows):
    print("host-built domU through libxenctrl (relay bulk window), dom0's time serving requests "
          "(TCG virtual time, -icount shift=0; bench/run_lifecycle_bench.py says what is counted)")
    for r in rows:
        label = f"{r['hypervisor']} {r['args']}".strip()
        if r["builds_passed"]:
            print(f"  {label:<20} build: {r['build_us_each']} us each ({r['builds']} builds, {r['build_frames']} frames "
                  f"served, {r['pages_written']} pages written each; host wall clock {r['build_wall_s_each']:.2f} s each)")
        else:
            print(f"  {label:<20} build: FAILED")
        if r["cycles_passed"] and "cycle_us_each" in r:
            print(f"  {label:<20} cycle: {r['cycle_us_each']} us each with the counting ({r['at_baseline']} of "
                  f"{r['cycles']} at baseline: {r['free_pages']} free pages, {r['dom0_ports']} dom0 ports, "
                  f"{r['domains']} domains)")
        else:
            print(f"  {label:<20} cycles: FAILED")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--build", default=os.path.join(ROOT, "build"))
    parser.add_argument("--output", default=None)
    parser.add_argument("--builds", type=int, default=10)
    parser.add_argument("--cycles", type=int, default=100)
    parser.add_argument("--only-host-built", action="store_true", help="skip the self-test table")
    parser.add_argument("--settle", type=float, default=5.0,
                        help="seconds of host time each host-built machine idles before its builds")
    args = parser.parse_args(argv)
    build = os.path.abspath(args.build)
    rows, ok = [], True
    for name, hypervisor_args, label in ([] if args.only_host_built else COLUMNS):
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
    host_rows = [host_built(build, "ours", "ptwr=emulate", args.builds, args.cycles, args.settle),
                 host_built(build, "xen417", "", args.builds, args.cycles, args.settle)]
    print_host_built(host_rows)
    ok = ok and all(r["builds_passed"] and r["cycles_passed"] for r in host_rows)
    output = args.output or os.path.join(build, "bench", "lifecycle.json")
    os.makedirs(os.path.dirname(output), exist_ok=True)
    with open(output, "w") as f:
        json.dump({"time_base": "guest clock under -icount shift=0: 1 ns per guest instruction", "rows": rows,
                   "host_built": host_rows}, f, indent=2)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
