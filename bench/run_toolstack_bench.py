#!/usr/bin/env python3
"""What the toolstack costs, as an administrator sees it: `make bench`'s toolstack table. For each
hypervisor (ours, Xen 4.17 with our relay dom0):

  1. The deterministic figures (bench/README.md "What the toolstack costs"): pvhvd with its
     background timers quiet (QUIET: console drain, safety poll, xenstore poll) starts the machine
     with the profiler plugin in control mode (bench/profiler/pvhv_profile.c), which counts the
     instructions the machine executes for a command, dom0's relay waiting for the host's bytes
     and the hypervisor's idle left out (WAITING, PER_PASS, INHERIT below name that code):
     - `xl create examples/hello.cfg` (hello kept alive: xenbus=wait): from dom0's relay taking
       the create's first request to the domU's first console write (its first console line);
     - `xl destroy hello`: from the first request to the last (and the daemon's answer to
       VIRQ_DOM_EXC).
     A warm-up cycle first (the session's first create maps dom0's relay buffers once: printed
     apart), then --repeat counted cycles, each figure printed with all its runs.
  2. The host-paced figures, secondary: pvhvd as users run it, the machine under -icount
     shift=0 (PVHV_QEMU_EXTRA: one nanosecond of virtual time per guest instruction):
     - create to first console lines: the hypervisor's system time when the create was asked
       (`xl info`'s system_time_ns: dom0's vcpu_time_info read through the relay,
       tools/daemon/machine_clock.h) to the system time the domU prints at the end of its first
       lines ("time: system N ns");
     - destroy: dom0's CPU time (getdomaininfo's cpu_time, virtual too) over the command (the
       system-time stamp cannot serve: Xen refreshes dom0's vcpu_time_info only when it
       schedules dom0 in, which a spinning relay does not need).
     The machine's virtual time, never the host's clock; but where the machine waits for the
     host (each relay request crosses the link) QEMU's virtual clock runs at the host's pace
     while dom0 idles, and the daemon polls on host timers, so these vary from run to run: the
     median of --repeat runs, with the spread.
  3. `xl list` on the host: requests per second the daemon answers to one client on its socket
     (the `list` op, as xl sends it), and whole `xl list` commands per second (process start,
     connect, hello, list, print). Host wall clock: labelled a host figure.

    python3 bench/run_toolstack_bench.py [--build build] [--output build/bench/toolstack.json]
                                         [--repeat 3] [--list-requests 500] [--hypervisors ours xen417]
                                         [--keep-windows DIR]
"""
import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import shutil
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(ROOT, "tests", "integration", "lib"))
sys.path.insert(0, HERE)
import machine  # noqa: E402
import pvhvd_client  # noqa: E402
import run_profile  # noqa: E402
import xen_symbols  # noqa: E402

ICOUNT = "-icount shift=0"
GUEST_TIME = re.compile(r"^time: system (\d+) ns", re.MULTILINE)
FIRST_LINE = "pvguest: booting on"
IDLE_BEFORE_CLOCK_S = 0.05
# After `xl destroy` returns: time for the daemon's answer to VIRQ_DOM_EXC (it reads the domain
# list) before the window is closed; the waiting after it is left out.
DESTROY_TAIL_S = 1.0


class Toolstack:
    def __init__(self, build, hypervisor, state, icount=True, plugin=None, daemon_args=()):
        self.build, self.state = build, state
        self.env = dict(os.environ, PVHV_STATE_DIR=state)
        saved = os.environ.get("PVHV_QEMU_EXTRA")
        extra = (ICOUNT if icount else "") + (f" -plugin {plugin}" if plugin else "")
        if extra:
            os.environ["PVHV_QEMU_EXTRA"] = extra
        try:
            self.daemon = pvhvd_client.Daemon(build, state, ["--hypervisor", hypervisor, *daemon_args])
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

    def create(self):
        self.xl("create", "-q", "examples/hello.cfg", 'extra="init=/hello xenbus=wait"')

    def settle(self, name, timeout=120):
        """Until `name`'s CPU time stops growing (hello waits for a xenstore that is not polled)."""
        deadline, before = time.monotonic() + timeout, None
        while time.monotonic() < deadline:
            now = [d["cpu_time_ns"] for d in self.client.ok("list")["domains"] if d["name"] == name]
            machine.expect(now, f"{name} is not listed")
            if now == before:
                return
            before = now
            time.sleep(0.5)
        machine.expect(False, f"{name} kept running for {timeout} s")

    def counted_create_and_destroy(self, window, keep=None):
        """One create to the domU's first console write, one destroy, counted by the plugin
        (its files kept as `keep`-create.txt and -destroy.txt if given)."""
        window.arm()
        self.create()
        create, _, _ = window.read(keep and keep + "-create.txt")
        self.settle("hello")
        window.arm()
        self.xl("destroy", "hello")
        time.sleep(DESTROY_TAIL_S)
        window.stop()
        destroy, _, _ = window.read(keep and keep + "-destroy.txt")
        machine.expect("hello" not in self.names(), "hello still listed after xl destroy")
        return {"create": create, "destroy": destroy}

    def create_and_destroy(self):
        """One create to first console lines, one destroy: a dict of the virtual-time figures."""
        start = self.system_ns()
        self.create()
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


# ---- the deterministic figures: the instructions the machine executes for a command ----

OPEN = "lib::relay::Server::handle_frame"  # dom0's relay takes a request frame
CLOSE = "kernel::(anonymous namespace)::ring_put"  # a domU's console write (dom0 writes through console_io)
PASS = "kernel::relay_window::receive"  # each pass of dom0's relay loop starts by polling the bulk window
# Dom0's relay loop between requests: its polls of the bulk window and the UART, its sleep. It
# never counts, nor does the hypervisor's code it enters (port I/O emulation, the scheduler, idle).
WAITING = ("kernel::relay::run_if_requested", "kernel::relay::(anonymous namespace)::serve_received",
           "kernel::relay::(anonymous namespace)::poll_window", "kernel::relay_window::available",
           "kernel::serial_link::receive", "kernel::sleep_until", "kernel::trace_capture::drain_when_idle")
# The loop's reading of frames: counts in a pass that works (one that took bytes, served a frame),
# where it copies and checks the request; in the others it found nothing.
PER_PASS = ("kernel::relay_window::receive", "relay::FrameReceiver::next")
# Guest code that counts when the code that entered it does: the hypercall stubs, the event and
# trap entry and what it runs for a timer, the clock, the MMU batch flush, the memory primitives.
INHERIT = ("hypercall_page", "event_callback_entry", "trap_common", "trap_dispatch", "restore_frame",
           "kernel::fuzz_fixup", "kernel::events_handle_upcall", "kernel::(anonymous namespace)::on_timer",
           "kernel::system_time_ns", "pv::PvOps::disable_events", "pv::PvOps::enable_events", "pv::PvOps::flush",
           "memcpy", "memmove", "memset")
# The daemon's background timers (console drain, safety poll, xenstore poll) out of the windows,
# so that the requests inside are the command's own.
QUIET = ["--monitor-ms", "3600000", "--safety-poll-ms", "3600000", "--xenstore-poll-ms", "3600000"]
PLUGIN = os.path.join("bench", "libpvhv_profile.so")


def function_ranges(path):
    """[(start, end, name)] of an ELF's functions: nm's size, or up to the next symbol without one."""
    out = subprocess.run(["nm", "-n", "-S", "-C", "--defined-only", path], capture_output=True, text=True,
                         check=True).stdout
    symbols = []
    for line in out.splitlines():
        parts = line.split(" ", 3)
        if len(parts) == 4 and parts[2] in "tTwW":
            symbols.append((int(parts[0], 16), int(parts[1], 16), run_profile.short_name(parts[3])))
        elif len(parts) == 3 and parts[1] in "tTwW":
            symbols.append((int(parts[0], 16), None, run_profile.short_name(parts[2])))
    ranges = []
    for i, (start, size, name) in enumerate(symbols):
        end = start + size if size else symbols[i + 1][0] if i + 1 < len(symbols) else start + 1
        ranges.append((start, end, name))
    return ranges


class Window:
    """The profiler plugin's control directory (bench/profiler/pvhv_profile.c, control mode)."""

    def __init__(self, build, directory):
        self.directory = directory
        machine.expect(os.path.exists(os.path.join(build, PLUGIN)), f"missing {PLUGIN} (build first)")
        kernel = function_ranges(os.path.join(build, "guest", "kernel"))
        address = {n: a for a, _, n in kernel}
        roles = {**{n: "wait" for n in WAITING}, **{n: "pass" for n in PER_PASS}, **{n: "inherit" for n in INHERIT}}
        missing = [n for n in (OPEN, CLOSE, PASS, *roles) if n not in address]
        machine.expect(not missing, f"the guest kernel has no {missing}")
        with open(os.path.join(directory, "neutral"), "w") as f:
            for start, end, name in kernel:
                if name in roles:
                    f.write(f"{start:x} {end:x} {roles[name]}\n")
        self.plugin_argument = (f"{os.path.join(build, PLUGIN)},control={directory},open={address[OPEN]:#x},"
                                f"close={address[CLOSE]:#x},pass={address[PASS]:#x},"
                                f"neutral={os.path.join(directory, 'neutral')}")
        self.result = os.path.join(directory, "window.txt")

    def arm(self, timeout=30):
        if os.path.exists(self.result):
            os.unlink(self.result)
        arm = os.path.join(self.directory, "arm")
        open(arm, "w").close()
        deadline = time.monotonic() + timeout
        while os.path.exists(arm):  # the plugin takes it within 10 ms; the vCPU acts at its next instruction
            machine.expect(time.monotonic() < deadline, "the plugin never took the arm request")
            time.sleep(0.01)
        time.sleep(0.1)

    def stop(self):
        open(os.path.join(self.directory, "stop"), "w").close()

    def read(self, keep=None, timeout=300):
        """(totals, counted per address, waiting per address) once the window has closed; the
        plugin's file copied to `keep` if given."""
        deadline = time.monotonic() + timeout
        while not os.path.exists(self.result):
            machine.expect(time.monotonic() < deadline, "the window never closed")
            time.sleep(0.05)
        if keep:
            shutil.copyfile(self.result, keep)
        totals, counted, waiting = {}, {}, {}
        with open(self.result) as f:
            for line in f:
                words = line.split()
                if words[0] in ("pc", "wait"):
                    (counted if words[0] == "pc" else waiting)[int(words[1], 16)] = int(words[2])
                else:
                    totals[words[0]] = int(words[1])
        return totals, counted, waiting


def summary(values):
    return {"median": statistics.median(values), "min": min(values), "max": max(values), "runs": len(values)}


def measure_counted(build, hypervisor, repeat, icount=True, keep=None):
    """The deterministic figures: a warm-up cycle (its create maps dom0's relay buffers the first
    time: kept as `cold_create`), then `repeat` counted ones, on a quiet daemon."""
    with tempfile.TemporaryDirectory(prefix="pvhv-tscount") as state, \
            tempfile.TemporaryDirectory(prefix="pvhv-tswindow") as directory:
        window = Window(build, directory)
        toolstack = Toolstack(build, hypervisor, state, icount, window.plugin_argument, QUIET)
        try:
            name = (lambda run: os.path.join(keep, f"{hypervisor}-{run}")) if keep else (lambda run: None)
            cold = toolstack.counted_create_and_destroy(window, name("cold"))
            runs = [toolstack.counted_create_and_destroy(window, name(i + 1)) for i in range(repeat)]
            toolstack.stop()
        finally:
            toolstack.daemon.stop()
            toolstack.daemon.kill_machine()
    row = {}
    for command in ("create", "destroy"):
        values = [r[command]["counted"] for r in runs]
        row[f"{command}_instructions"] = dict(summary(values), values=values,
                                              waiting=[r[command]["waiting"] for r in runs],
                                              passes=[r[command]["passes_counted"] for r in runs])
    row["cold_create_instructions"] = cold["create"]["counted"]
    return row


def measure(build, hypervisor, repeat, list_requests, icount=True, keep=None):
    row = measure_counted(build, hypervisor, repeat, icount, keep)
    row.update(measure_paced(build, hypervisor, repeat, list_requests, icount))
    return row


def measure_paced(build, hypervisor, repeat, list_requests, icount=True):
    """The host-paced virtual-time figures and the host's rates, on a daemon as users run it."""
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
    lines = ["toolstack (pvhvd + xl): instructions the machine executes for the command, the waiting "
             "for the host left out (deterministic; runs):",
             f"  {'':34}" + "".join(f"{name:>38}" for name in rows)]

    def counted(cell):
        values = cell["values"]
        same = len(set(values)) == 1
        return (f"{values[0]:,} (all {len(values)})" if same else
                f"{statistics.median(values):,.0f} [{min(values):,}..{max(values):,}]")

    for key, label in (("create_instructions", "xl create -> first console write"),
                       ("destroy_instructions", "xl destroy, first to last request")):
        lines.append(f"  {label:34}" + "".join(f"{counted(row[key]):>38}" for row in rows.values()))
    lines.append(f"  {'(first create of the session)':34}" +
                 "".join(f"{row['cold_create_instructions']:>38,}" for row in rows.values()))
    lines.append(f"host-paced (median of runs, [min..max]; {clock}; varies with the host):")

    def ms(cell):
        return f"{cell['median'] / 1e6:9.2f} ms [{cell['min'] / 1e6:.2f}..{cell['max'] / 1e6:.2f}]"

    for key, label in (("create_to_console_ns", "xl create -> first console lines"),
                       ("destroy_dom0_cpu_ns", "xl destroy (dom0 CPU time)")):
        lines.append(f"  {label:34}" + "".join(f"{ms(row[key]):>38}" for row in rows.values()))
    lines.append("host figures (wall clock of this host, not the machine's):")
    for key, label in (("list_requests_per_s", "daemon list requests/s"), ("xl_list_commands_per_s", "xl list commands/s")):
        lines.append(f"  {label:34}" + "".join(f"{row[key]:>38.0f}" for row in rows.values()))
    return "\n".join(lines) + "\n"


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--build", default=os.path.join(ROOT, "build"))
    parser.add_argument("--output", default=None, help="JSON results (default: BUILD/bench/toolstack.json)")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--list-requests", type=int, default=500)
    parser.add_argument("--hypervisors", nargs="+", default=["ours", "xen417"], choices=["ours", "xen417"])
    parser.add_argument("--no-icount", action="store_true", help="smoke runs: the harness, not the figures")
    parser.add_argument("--keep-windows", metavar="DIR", help="keep the plugin's per-address counts of every window")
    args = parser.parse_args()
    build = os.path.abspath(args.build)
    icount = not args.no_icount
    if args.keep_windows:
        os.makedirs(args.keep_windows, exist_ok=True)
    rows = {name: measure(build, name, args.repeat, args.list_requests, icount, args.keep_windows)
            for name in args.hypervisors}
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
