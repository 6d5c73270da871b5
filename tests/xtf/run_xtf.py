#!/usr/bin/env python3
"""Runs Xen's own test framework (XTF) PV64 tests as domUs through pvhvd and `xl create`, on
Xen 4.17 and on ours (ptwr=emulate and ptwr=writable), and prints a table of their results.

Each configuration is one machine: pvhvd starts it once and every test is an `xl create` of the
test's own .cfg (as XTF's xtf-runner does on Xen), with on_poweroff/on_crash/on_reboot
"preserve" so the runner sees how the domain ended and reads its whole console before
`xl destroy`. A test's result is what XTF prints on its console (`Test result: SUCCESS`,
`SKIP`, `FAILURE`, `ERROR`); a domain that crashed without one is CRASH (with XTF's PANIC line
when it printed one), one that neither ends nor reports within the timeout is TIMEOUT, one that
`xl create` refused is CREATE-FAILED. See tests/xtf/README.md.
"""
import argparse
import glob
import json
import os
import re
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "tests", "integration", "lib"))
import pvhvd_client  # noqa: E402

# name: (pvhvd arguments, the table's column header)
CONFIGURATIONS = {
    "xen417": (["--hypervisor", "xen417"], "Xen 4.17"),
    "emulate": (["--hypervisor", "ours", "--ptwr", "emulate"], "ours (emulate)"),
    "writable": (["--hypervisor", "ours", "--ptwr", "writable"], "ours (writable)"),
}
RESULT = re.compile(r"Test result: (SUCCESS|SKIP|FAILURE|ERROR)")
PANIC = re.compile(r"PANIC: (.*)")
ENDINGS = ['on_poweroff="preserve"', 'on_crash="preserve"', 'on_reboot="preserve"']
CONSOLE_SETTLE_S = 2.0  # the daemon drains console rings every 500 ms


def find_tests(xtf, pattern):
    """Every tests/*/test-pv64-*.cfg of a built XTF tree, as (test name, cfg path), sorted."""
    found = []
    for cfg in sorted(glob.glob(os.path.join(xtf, "tests", "*", "test-pv64-*.cfg"))):
        name = os.path.basename(cfg)[: -len(".cfg")]
        if pattern is None or re.search(pattern, name):
            found.append((name, cfg))
    return found


class Machine:
    """One pvhvd and its machine, kept up across many tests."""

    def __init__(self, build, state, args):
        self.build, self.state = build, state
        self.daemon = pvhvd_client.Daemon(build, state, args, timeout=600)
        self.env = pvhvd_client.xl_env(state)

    def xl(self, *args, timeout=240):
        return pvhvd_client.run_xl(self.build, self.env, *args, timeout=timeout)

    def domain(self, name):
        client = self.daemon.client()
        try:
            for entry in client.ok("list")["domains"]:
                if entry["name"] == name:
                    return entry
            return None
        finally:
            client.close()

    def console(self, name):
        path = os.path.join(self.state, f"console-{name}.log")
        return open(path, errors="replace").read() if os.path.exists(path) else ""

    def hypervisor_log(self, domid):
        """What domain `domid` wrote through HYPERVISOR_console_io, as the hypervisor prints it
        on the machine's serial line ("(dN) ..."): XTF writes there too, before its PV console
        is up (Xen 4.17 refuses it to a domU; ours prints it)."""
        path = os.path.join(self.state, "serial.log")
        prefix = f"(d{domid}) "
        if domid is None or not os.path.exists(path):
            return ""
        with open(path, errors="replace") as f:
            return "".join(line[len(prefix):] for line in f if line.startswith(prefix))

    def stop(self):
        self.daemon.stop(timeout=60)
        self.daemon.kill_machine()


def classify(console, ended):
    """(result, detail) from a test's console and how its domain ended ("poweroff", "crash",
    "reboot", "timeout")."""
    results = RESULT.findall(console)
    panic = PANIC.search(console)
    if results:
        detail = ""
        failures = [line for line in console.splitlines() if "Fail" in line or "Error" in line]
        if failures:
            detail = failures[0].strip()
        if ended == "crash":
            detail = ("crashed after its result; " + detail).strip("; ")
        return results[-1], detail
    if panic:
        return "CRASH", "PANIC: " + panic.group(1).strip()
    if ended == "crash":
        return "CRASH", "domain crashed (no XTF panic)"
    if ended == "timeout":
        tail = console.strip().splitlines()[-1:] or ["(no console output)"]
        return "TIMEOUT", tail[0]
    return "NO-RESULT", f"ended ({ended}) without a result"


def run_test(machine, name, cfg, timeout):
    created = machine.xl("create", cfg, *ENDINGS)
    if created.returncode != 0:
        return "CREATE-FAILED", (created.stderr.strip().splitlines() or [""])[-1]
    deadline = time.monotonic() + timeout
    ended = "timeout"
    domid = None
    while time.monotonic() < deadline:
        entry = machine.domain(name)
        if entry is not None:
            domid = entry["domid"]
        if entry is None:
            ended = "gone"
            break
        if entry["crashed"]:
            ended = "crash"
            break
        if entry["shutdown"]:
            ended = {0: "poweroff", 1: "reboot", 2: "suspend", 3: "crash", 4: "watchdog"}.get(
                entry["shutdown_reason"], "shutdown")
            break
        time.sleep(0.5)
    # The console's last bytes reach the log on the daemon's next drain.
    settle = time.monotonic() + CONSOLE_SETTLE_S
    while time.monotonic() < settle and not RESULT.search(machine.console(name)):
        time.sleep(0.25)
    if ended == "gone":
        time.sleep(CONSOLE_SETTLE_S)
    console = machine.console(name)
    if not RESULT.search(console) and not PANIC.search(console):
        console += machine.hypervisor_log(domid)
    if ended != "gone":
        machine.xl("destroy", name)
        wait_gone(machine, name)
    return classify(console, ended)


def wait_gone(machine, name, timeout=60):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and machine.domain(name) is not None:
        time.sleep(0.5)


def run_configuration(build, config, tests, timeout, keep, log):
    args, _ = CONFIGURATIONS[config]
    state = os.path.join(keep, config) if keep else tempfile.mkdtemp(prefix=f"xtf-{config}-")
    results = {}
    log(f"== {config}: pvhvd {' '.join(args)} (state {state})")
    machine = Machine(build, state, args)
    try:
        for name, cfg in tests:
            started = time.monotonic()
            try:
                results[name] = run_test(machine, name, cfg, timeout)
            except (subprocess.TimeoutExpired, OSError, ConnectionError, SystemExit) as e:
                results[name] = ("RUNNER-ERROR", str(e).splitlines()[0] if str(e) else type(e).__name__)
            log(f"   {name}: {results[name][0]} ({time.monotonic() - started:.1f} s) {results[name][1]}")
    finally:
        machine.stop()
    return results


def short(name):
    return name[len("test-pv64-"):] if name.startswith("test-pv64-") else name


def same_outcome(ours, xen):
    """The same result; for two crashes, the same reason too (XTF's panic line, or none)."""
    return ours[0] == xen[0] and (ours[0] != "CRASH" or ours[1] == xen[1])


def table(tests, columns, results):
    """The table: a test per line, a column per configuration, a last column saying whether every
    column of ours gives Xen 4.17's result; then the count and each differing test's details."""
    headers = ["test"] + [CONFIGURATIONS[c][1] for c in columns]
    compare = "xen417" in columns and len(columns) > 1
    if compare:
        headers.append("match")
    rows = []
    matching = 0
    for name, _ in tests:
        row = [short(name)] + [results[c][name][0] for c in columns]
        if compare:
            same = all(same_outcome(results[c][name], results["xen417"][name]) for c in columns)
            matching += same
            row.append("yes" if same else "NO")
        rows.append(row)
    widths = [max(len(str(r[i])) for r in rows + [headers]) for i in range(len(headers))]
    lines = ["  ".join(str(v).ljust(w) for v, w in zip(headers, widths)).rstrip()]
    lines.append("  ".join("-" * w for w in widths))
    lines += ["  ".join(str(v).ljust(w) for v, w in zip(row, widths)).rstrip() for row in rows]
    if compare:
        lines.append("")
        lines.append(f"{matching} of {len(tests)} tests give Xen 4.17's result in every column of ours")
    lines.append("")
    lines.append("Details (the first failure or panic line of each test that did not succeed):")
    for name, _ in tests:
        for c in columns:
            result, detail = results[c][name]
            if result != "SUCCESS" and detail:
                lines.append(f"  {short(name)} [{CONFIGURATIONS[c][1]}] {result}: {detail}")
    return "\n".join(lines)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--xtf", required=True, help="a built XTF tree (make -C DIR)")
    parser.add_argument("--build", default=os.path.join(ROOT, "build"))
    parser.add_argument("--configs", default="xen417,emulate,writable",
                        help="comma-separated, of: " + ", ".join(CONFIGURATIONS))
    parser.add_argument("--only", default=None, help="a regular expression the test names must match")
    parser.add_argument("--timeout", type=float, default=300,
                        help="seconds a test may run (XTF's msr test takes two minutes under TCG)")
    parser.add_argument("--keep", default=None, help="keep each configuration's state directory under DIR")
    parser.add_argument("--output", default=None, help="also write the table (and a JSON of it, .json) here")
    parser.add_argument("--previous", default=None,
                        help="a JSON an earlier --output wrote: its results stand in for those not run now")
    args = parser.parse_args()

    every_test = find_tests(os.path.abspath(args.xtf), None)
    tests = find_tests(os.path.abspath(args.xtf), args.only)
    if not tests:
        raise SystemExit(f"no tests/*/test-pv64-*.cfg under {args.xtf}: build XTF first (make -C {args.xtf})")
    columns = [c.strip() for c in args.configs.split(",") if c.strip()]
    for c in columns:
        if c not in CONFIGURATIONS:
            raise SystemExit(f"unknown configuration {c!r}")

    def log(text):
        print(text, file=sys.stderr, flush=True)

    results = {}
    if args.previous:
        with open(args.previous) as f:
            results = {c: {n: tuple(v) for n, v in r.items()} for c, r in json.load(f).items()}
    for c in columns:
        results.setdefault(c, {}).update(run_configuration(args.build, c, tests, args.timeout, args.keep, log))
    # With --previous, the table is of every test the earlier run and this one have between them.
    listed = every_test if args.previous else tests
    listed = [t for t in listed if any(t[0] in r for r in results.values())]
    shown = [c for c in CONFIGURATIONS if c in results and all(name in results[c] for name, _ in listed)]
    text = table(listed, shown, results)
    print(text)
    if args.output:
        with open(args.output, "w") as f:
            f.write(text + "\n")
        with open(args.output + ".json", "w") as f:
            json.dump({c: {n: list(v) for n, v in r.items()} for c, r in results.items()}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
