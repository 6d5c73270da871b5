"""The toolstack end to end, as an administrator drives it: pvhvd started on a fresh state
directory, two domUs created by `xl create` from examples/*.cfg, `xl list` in Xen's format, a
console read, `xl reboot -w` of a guest obeying control/shutdown and coming back under a new
domid with the same name and uuid (on_reboot="restart"), the daemon killed with -9 and
restarted with `xl list` unchanged and the guests' xenstore rings served again, `xl shutdown -w`
obeyed by the guest, `xl shutdown` of a guest without PV control refused as Xen's xl does and
done with -F, `xl destroy`, free memory back at baseline, the daemon stopped. Shared by
test_guest_xl_toolstack.py (ours and Xen 4.17) and `make run` (--show prints it as a user sees it).
"""
import argparse
import json
import os
import re
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import guest_boot  # noqa: E402
import machine  # noqa: E402
import pvhvd_client  # noqa: E402

ROOT = machine.ROOT
LIST_HEADER = "Name                                        ID   Mem VCPUs\tState\tTime(s)"
# xl_list.c: name left in 40 columns, id in 5, memory (MiB) in 5, vCPUs in 5, the six state
# letters (or dashes), the CPU time in seconds with one decimal, in 8.
LIST_LINE = re.compile(r"^(\S.{0,39}?)\s+(\d+)\s+(\d+)\s+(\d+)\s+([r-][b-][p-][s-][c-][d-])\s+(\d+\.\d)$")


class Scenario:
    def __init__(self, build, hv, state_dir, show):
        self.build, self.hv, self.state_dir, self.show = build, hv, state_dir, show
        self.env = pvhvd_client.xl_env(state_dir)
        self.daemon = None

    def say(self, text):
        if self.show:
            print(text, flush=True)

    def xl(self, *args, timeout=120, check=True):
        result = pvhvd_client.run_xl(self.build, self.env, *args, timeout=timeout)
        self.say(f"$ xl {' '.join(args)}" + (f"\n{result.stdout.rstrip()}" if result.stdout.strip() else "") +
                 (f"\n{result.stderr.rstrip()}" if result.stderr.strip() else ""))
        if check:
            machine.expect(result.returncode == 0, f"xl {' '.join(args)}: status {result.returncode}\n"
                           f"{result.stdout}{result.stderr}\n{self.daemon.text() if self.daemon else ''}")
        return result

    def listed(self):
        """`xl list` as {name: (id, mem, vcpus, state)}, each line checked against Xen's format."""
        lines = self.xl("list").stdout.rstrip("\n").split("\n")
        machine.expect(lines[0] == LIST_HEADER, f"xl list header {lines[0]!r}")
        domains = {}
        for line in lines[1:]:
            m = LIST_LINE.match(line)
            machine.expect(m is not None, f"xl list line not in Xen's format: {line!r}")
            domains[m.group(1).strip()] = (int(m.group(2)), int(m.group(3)), int(m.group(4)), m.group(5))
        return domains

    def free_memory(self):
        return int(self.xl("info", "free_memory").stdout.strip())

    def wait_gone(self, name, timeout=120):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if name not in self.listed():
                return
            time.sleep(1)
        machine.expect(False, f"{name} did not go away:\n{self.daemon.text()}")

    def wait_console(self, name, text, timeout=120, count=1):
        """Until `text` is in the domain's console log `count` times (a restarted domain goes on
        in its predecessor's log)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.console_log(name).count(text) >= count:
                return
            time.sleep(0.5)
        machine.expect(False, f"{name}'s console never said {text!r}:\n{self.console_log(name)[-2000:]}\n"
                       f"{self.daemon.text()}")

    def expect_free_memory(self, baseline, timeout=60):
        """Free memory (MiB, `xl info`) back at `baseline` within `timeout` s, else the test fails."""
        free = pvhvd_client.settle(self.free_memory, baseline, timeout, step=1)
        machine.expect(free == baseline, f"free memory {free} MiB, {baseline} MiB at the start")
        return free

    def uuid_of(self, name):
        for entry in json.loads(self.xl("list", "-l", name).stdout):
            return entry["config"]["uuid"]

    def console_log(self, name):
        path = os.path.join(self.state_dir, f"console-{name}.log")
        return open(path, errors="replace").read() if os.path.exists(path) else ""

    def start_daemon(self, attach=False):
        args = ["--attach", os.path.join(self.state_dir, "com2.sock")] if attach else ["--hypervisor", self.hv.name]
        self.say(f"$ pvhvd --state-dir {self.state_dir} {' '.join(args)} &")
        self.daemon = pvhvd_client.Daemon(self.build, self.state_dir, args)

    def run(self):
        self.start_daemon()
        before = self.listed()
        machine.expect(list(before) == ["Domain-0"] and before["Domain-0"][0] == 0, f"at start: {before}")
        baseline = self.free_memory()

        # forktest runs to its end (init's status 0 on its console) and is destroyed on poweroff.
        self.xl("create", "examples/forktest.cfg")
        # hello waits for a shutdown request (xenbus=wait: no init runs); created paused first.
        self.xl("create", "-p", "examples/hello.cfg", 'extra="xenbus=wait"')
        domains = self.listed()
        machine.expect("hello" in domains and domains["hello"][3][2] == "p", f"hello not paused: {domains}")
        machine.expect(domains["hello"][1] in (15, 16), f"hello's memory {domains['hello'][1]} MiB, not 16")
        self.xl("unpause", "hello")
        self.wait_gone("forktest")
        log = self.console_log("forktest")
        machine.expect("init exited: status 0" in log, f"forktest's console: {log[-2000:]}")
        self.say("forktest's console (the daemon's log of it), last lines:\n  " +
                 "\n  ".join(log.strip().splitlines()[-4:]))

        # xl reboot: the daemon writes control/shutdown = reboot, the guest (xenbus=wait: no init,
        # it waits for the request) acknowledges and reboots, on_reboot="restart" builds it again
        # under a new domid with the same name and uuid.
        self.xl("create", "examples/forktest.cfg", 'cmdline="xenbus=wait"')
        self.wait_console("forktest", "xenbus: waiting for control/shutdown (store connected)")
        first_id, first_uuid = self.listed()["forktest"][0], self.uuid_of("forktest")
        self.xl("reboot", "-w", "forktest", timeout=180)
        self.wait_console("forktest", "xenbus: control/shutdown asks for reboot")
        again = self.listed()
        machine.expect("forktest" in again and again["forktest"][0] != first_id,
                       f"forktest not back under a new domid (was {first_id}): {again}")
        machine.expect(self.uuid_of("forktest") == first_uuid, "forktest's uuid changed across its reboot")
        self.say(f"forktest rebooted: d{first_id} -> d{again['forktest'][0]}, uuid {first_uuid} kept")
        # Its xenbus up again (until then it has no PV control, as an HVM guest before its drivers).
        self.wait_console("forktest", "xenbus: waiting for control/shutdown (store connected)", count=2)
        self.xl("shutdown", "-w", "forktest", timeout=180)
        self.wait_gone("forktest")
        log = self.console_log("forktest")
        machine.expect("xenbus: control/shutdown asks for poweroff" in log, f"forktest's console: {log[-2000:]}")
        # A paused guest's xenbus is not up: no PV control; -F falls back to SCHEDOP_remote_shutdown.
        self.xl("create", "-p", "examples/forktest.cfg")
        result = self.xl("shutdown", "-F", "-w", "forktest", timeout=180)
        machine.expect("sending SCHEDOP_remote_shutdown (poweroff)" in result.stderr, result.stderr)
        self.wait_gone("forktest")

        # kill -9 of the daemon: restarted, it finds the same domains.
        before = self.listed()
        self.daemon.kill9()
        self.say("$ kill -9 pvhvd")
        self.start_daemon(attach=True)
        after = self.listed()
        machine.expect({k: v[:3] for k, v in after.items()} == {k: v[:3] for k, v in before.items()},
                       f"xl list changed across kill -9: {before} -> {after}")

        # The restarted daemon took hello's ring over with its watch: it obeys control/shutdown.
        result = self.xl("shutdown", "-w", "hello", timeout=180)
        machine.expect("PV control interface not available" not in result.stderr, result.stderr)
        self.wait_gone("hello")
        log = self.console_log("hello")
        machine.expect("xenbus: control/shutdown asks for poweroff" in log, f"hello's console: {log[-2000:]}")
        # Without -F, a guest without PV control is refused as Xen's xl refuses it. (The restarted
        # daemon builds through the bulk window again: about a second, tools/README.md.)
        self.xl("create", "-p", "examples/hello.cfg", timeout=300)
        refused = self.xl("shutdown", "hello", check=False)
        machine.expect(refused.returncode == 1 and refused.stderr.endswith(
            "PV control interface not available: external graceful shutdown not possible.\n"
            "Use \"-F\" to fallback to ACPI power event.\nshutdown failed (rc=-10)\n"),
            f"xl shutdown of a guest without PV control: {refused.returncode} {refused.stderr!r}")
        self.xl("destroy", "hello")
        self.wait_gone("hello")
        free = self.expect_free_memory(baseline, 30)
        self.say(f"free memory back at its baseline: {free} MiB")
        self.say("$ kill %pvhvd   # SIGTERM: dom0 shuts down, the machine stops")
        status = self.daemon.stop()
        machine.expect(status == 0, f"pvhvd's exit status {status}:\n{self.daemon.text()}")
        self.daemon = None

    def cleanup(self):
        if self.daemon:
            self.daemon.stop()
            self.daemon.kill_machine()


def run(build, hv, show=False):
    with tempfile.TemporaryDirectory(prefix="pvhv-toolstack") as state:
        scenario = Scenario(build, hv, state, show)
        try:
            scenario.run()
        finally:
            scenario.cleanup()


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--build", default=os.path.join(ROOT, "build"))
    parser.add_argument("--hypervisor", default="ours", choices=["ours", "xen417"])
    args = parser.parse_args()
    print(f"\n=== the toolstack: pvhvd and xl on {args.hypervisor} ===")
    run(args.build, guest_boot.hypervisor(args.build, args.hypervisor), show=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
