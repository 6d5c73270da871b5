#!/usr/bin/env python3
"""What the toolstack costs, as an administrator sees it: `make bench`'s toolstack table. For each
hypervisor (ours, Xen 4.17 with our relay dom0), pvhvd starts the machine under -icount shift=0
(PVHV_QEMU_EXTRA: one nanosecond of virtual time per guest instruction), then:

  1. `xl create examples/hello.cfg` (hello kept alive: xenbus=wait, no init) to the domU's first
     console lines: the hypervisor's system time when the create was asked (`xl info`'s
     system_time_ns: dom0's vcpu_time_info read through the relay, tools/daemon/machine_clock.h)
     to the system time the domU prints on its console at the end of its first lines
     ("time: system N ns", a few hundred microseconds of its own boot after "pvguest: booting").
  2. `xl destroy hello`: dom0's CPU time (getdomaininfo's cpu_time, virtual too) over the
     command: the relay serves the requests and the hypervisor tears the domain down in dom0's
     time, and the relay spins between the requests of one command, so it is the latency as
     the machine counts it. (The system-time stamp cannot serve here: Xen refreshes dom0's
     vcpu_time_info only when it schedules dom0 in, which a spinning relay does not need.)

  Both figures are the machine's virtual time, never the host's clock. Where the machine waits
  for the host (each relay request crosses the link), QEMU's virtual clock runs at the host's
  pace while dom0 idles, and the daemon's monitor polls every 500 ms of host time, so the
  figures vary a little from run to run. Each is the median of --repeat runs, with the spread.

  3. `xl list` on the host: requests per second the daemon answers to one client on its socket
     (the `list` op, as xl sends it), and whole `xl list` commands per second (process start,
     connect, hello, list, print). Host wall clock: labelled a host figure.

    python3 bench/run_toolstack_bench.py [--build build] [--output build/bench/toolstack.json]
                                         [--repeat 3] [--list-requests 500] [--hypervisors ours xen417]
"""
import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(ROOT, "tests", "integration"))
import machine  # noqa: E402
import pvhvd_client  # noqa: E402

ICOUNT = "-icount shift=0"
GUEST_TIME = re.compile(r"^time: system (\d+) ns", re.MULTILINE)
FIRST_LINE = "pvguest: booting on"
IDLE_BEFORE_CLOCK_S = 0.05


class Toolstack:
    def __init__(self, build, hypervisor, state, icount=True):
        self.build, self.state = build, state
        self.env = dict(os.environ, PVHV_STATE_DIR=state)
        saved = os.environ.get("PVHV_QEMU_EXTRA")
        if icount:
            os.environ["PVHV_QEMU_EXTRA"] = ICOUNT
        try:
            self.daemon = pvhvd_client.Daemon(build, state, ["--hypervisor", hypervisor])
        finally:
            if saved is None:
                os.environ.pop("PVHV_QEMU_EXTRA", None)
            else:
                os.environ["PVHV_QEMU_EXTRA"] = saved
        self.client = self.daemon.client(timeout=300)

    def xl(self, *args, timeout=300):
        run = subprocess.run([os.path.join(self.build, "bin", "xl"), *args], cwd=ROOT, env=self.env,
                             capture_output=True, text=True, timeout=timeout)
        machine.expect(run.returncode == 0, f"xl {' '.join(args)}: {run.returncode} {run.stdout}{run.stderr}\n"
                       f"{self.daemon.text()[-3000:]}")
        return run.stdout

    def system_ns(self):
        # dom0 idle first, so this request wakes it: Xen refreshes vcpu_time_info when it
        # schedules dom0 in (while the relay spins between close requests, the stamp gets old).
        time.sleep(IDLE_BEFORE_CLOCK_S)
        answer = self.client.ok("info")
        machine.expect("system_time_ns" in answer, f"info has no system_time_ns: {answer}")
        return answer["system_time_ns"]

    def dom0_cpu_ns(self):
        return self.client.ok("list", dom="0")["domains"][0]["cpu_time_ns"]

    def console(self, name):
        path = os.path.join(self.state, f"console-{name}.log")
        return open(path, errors="replace").read() if os.path.exists(path) else ""

    def wait_console(self, name, pattern, timeout=300):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            m = pattern.search(self.console(name))
            if m:
                return m
            time.sleep(0.2)
        machine.expect(False, f"{name}'s console never showed {pattern.pattern}: {self.console(name)[-2000:]}")

    def names(self):
        return [d["name"] for d in self.client.ok("list")["domains"]]

    def create_and_destroy(self):
        """One create to first console lines, one destroy: a dict of the virtual-time figures."""
        start = self.system_ns()
        self.xl("create", "-q", "examples/hello.cfg", 'extra="init=/hello xenbus=wait"')
        guest = int(self.wait_console("hello", GUEST_TIME).group(1))
        log = self.console("hello")
        machine.expect(log.lstrip().startswith(FIRST_LINE), f"hello's first console line: {log[:200]!r}")
        cpu_before = self.dom0_cpu_ns()
        self.xl("destroy", "hello")
        cpu_after = self.dom0_cpu_ns()
        machine.expect("hello" not in self.names(), "hello still listed after xl destroy")
        return {"create_to_console_ns": guest - start, "destroy_dom0_cpu_ns": cpu_after - cpu_before}

    def list_rates(self, requests):
        """(daemon list answers per second on one connection, xl list commands per second)."""
        begin = time.perf_counter()
        for _ in range(requests):
            self.client.ok("list")
        per_request = (time.perf_counter() - begin) / requests
        commands = max(5, requests // 20)
        begin = time.perf_counter()
        for _ in range(commands):
            self.xl("list")
        per_command = (time.perf_counter() - begin) / commands
        return 1 / per_request, 1 / per_command

    def stop(self):
        self.client.close()
        status = self.daemon.stop()
        machine.expect(status == 0, f"pvhvd's exit status {status}:\n{self.daemon.text()[-3000:]}")


def summary(values):
    return {"median": statistics.median(values), "min": min(values), "max": max(values), "runs": len(values)}


def measure(build, hypervisor, repeat, list_requests, icount=True):
    with tempfile.TemporaryDirectory(prefix="pvhv-tsbench") as state:
        toolstack = Toolstack(build, hypervisor, state, icount)
        try:
            runs = [toolstack.create_and_destroy() for _ in range(repeat)]
            list_rps, xl_list_rps = toolstack.list_rates(list_requests)
            toolstack.stop()
        finally:
            toolstack.daemon.stop()
            toolstack.daemon.kill_machine()
    row = {key: summary([r[key] for r in runs]) for key in runs[0]}
    row.update({"list_requests_per_s": list_rps, "xl_list_commands_per_s": xl_list_rps,
                "list_requests": list_requests})
    return row


def report_text(rows, icount):
    clock = "virtual time, -icount shift=0" if icount else "the machine's clock, no -icount (smoke run)"
    lines = [f"toolstack (pvhvd + xl; median of runs, [min..max]; {clock}):",
             f"  {'':34}" + "".join(f"{name:>26}" for name in rows)]

    def ms(cell):
        return f"{cell['median'] / 1e6:9.2f} ms [{cell['min'] / 1e6:.2f}..{cell['max'] / 1e6:.2f}]"

    for key, label in (("create_to_console_ns", "xl create -> first console lines"),
                       ("destroy_dom0_cpu_ns", "xl destroy (dom0 CPU time)")):
        lines.append(f"  {label:34}" + "".join(f"{ms(row[key]):>26}" for row in rows.values()))
    lines.append("host figures (wall clock of this host, not the machine's):")
    for key, label in (("list_requests_per_s", "daemon list requests/s"), ("xl_list_commands_per_s", "xl list commands/s")):
        lines.append(f"  {label:34}" + "".join(f"{row[key]:>26.0f}" for row in rows.values()))
    return "\n".join(lines) + "\n"


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--build", default=os.path.join(ROOT, "build"))
    parser.add_argument("--output", default=None, help="JSON results (default: BUILD/bench/toolstack.json)")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--list-requests", type=int, default=500)
    parser.add_argument("--hypervisors", nargs="+", default=["ours", "xen417"], choices=["ours", "xen417"])
    parser.add_argument("--no-icount", action="store_true", help="smoke runs: the harness, not the figures")
    args = parser.parse_args()
    build = os.path.abspath(args.build)
    icount = not args.no_icount
    rows = {name: measure(build, name, args.repeat, args.list_requests, icount) for name in args.hypervisors}
    text = report_text(rows, icount)
    print(text, end="")
    output = args.output or os.path.join(build, "bench", "toolstack.json")
    os.makedirs(os.path.dirname(output), exist_ok=True)
    with open(output, "w") as f:
        json.dump({"icount": ICOUNT if icount else None, "hypervisors": rows}, f, indent=2)
    with open(os.path.splitext(output)[0] + ".md", "w") as f:
        f.write("```\n" + text + "```\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
