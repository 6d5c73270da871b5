"""`xl ptwr-mode` and xl.cfg's `ptwr_mode=` through pvhvd (issue 10, "plus ours").

On ours: forktest (pte=direct: its kernel writes page-table entries with plain stores; its
stress check repeated) created paused with ptwr_mode="emulate"; `xl ptwr-mode forktest` prints
it; then, while it forks, its mode is flipped between writable and emulate, each phase (between
an unpause and a pause) with its counters read from the daemon's `ptwr_mode` answers: no detach while emulate but emulations, detaches while writable; the guest
still ends with init's status 0. Refusals: `xl ptwr-mode` with a bad mode (status 2), of a
domain that does not exist (status 1), the daemon's op with garbage. A domU running
selftest=ptwr-mode is refused the domctl (-EPERM, -ESRCH, -EACCES:
guest/selftest/memory/selftest_ptwr_mode.cpp). The machine ends with a clean frame audit.

On Xen 4.17 (no such domctl): `xl ptwr-mode` says so in one line and exits 1, a config asking
for writable is refused (nothing leaked), one asking for emulate (what Xen does) is created,
and the same hostile domU selftest passes.
"""
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import guest_boot  # noqa: E402
import machine  # noqa: E402
import pvhvd_client  # noqa: E402

# What shows that a phase ran in its mode: a plain store to a page table traps to a detach while
# writable and is emulated while emulate.
PHASE_COUNTER = {"writable": "ptwr_faults", "emulate": "ptwr_emulations"}
PHASE_POLL_S = 0.02
STRESS_ROUNDS = 10


class Run:
    def __init__(self, build, hv, daemon):
        self.build, self.hv, self.state, self.daemon = build, hv, daemon.state, daemon.daemon
        self.xl, self.ok = daemon.xl, daemon.xl_ok

    def names(self):
        return pvhvd_client.domain_names(self.daemon)

    def wait_gone(self, name, timeout=300):
        pvhvd_client.wait_gone(self.daemon, name, timeout)

    def console(self, name):
        path = os.path.join(self.state, f"console-{name}.log")
        return open(path, errors="replace").read() if os.path.exists(path) else ""

    def hostile_domu(self):
        """A domU whose kernel calls the domctl: refused whatever the hypervisor."""
        self.ok("create", "examples/hello.cfg", 'name="hostile"', 'extra="init=/hello selftest=ptwr-mode"')
        self.wait_gone("hostile")
        log = self.console("hostile")
        failures = [line for line in log.splitlines() if "selftest ptwr-mode" in line and "FAIL" in line]
        machine.expect(not failures and "selftest ptwr-mode: passed" in log,
                       f"{self.hv.name}: the domU's selftest=ptwr-mode: {failures or log[-3000:]}")
        machine.expect("selftest ptwr-mode: privileged: 0" in log, f"the domU thinks it is privileged: {log[-2000:]}")
        return sum(1 for line in log.splitlines() if line.startswith("selftest ptwr-mode: "))

    def stop(self):
        status = self.daemon.stop()
        machine.expect(status == 0, f"pvhvd's exit status {status}:\n{self.daemon.text()}")
        return self.daemon.serial()


def delta(after, before, name):
    return after.get(name, 0) - before.get(name, 0)


def one_forktest(run, name, phases, first_mode):
    """A forktest forking while its mode flips; appends (mode, counters delta) per phase.

    Each phase is the guest's run between an unpause and a pause, and lasts until the counter
    its mode moves (detaches while writable, emulations while emulate) has grown: the mode is
    set and the counters read while the domain is paused, so however slow the host makes the
    daemon's answers (a tenth of a second each on a loaded 2-core machine), they do not use up
    the guest's fork loop. Its stress check runs STRESS_ROUNDS times, so that it forks for a few
    seconds rather than the third of a second of one round on an idle host.
    """
    run.ok("create", "-p", "examples/forktest.cfg", f'name="{name}"', 'ptwr_mode="emulate"',
           f'cmdline="init=/forktest pte=direct -- --stress-rounds {STRESS_ROUNDS}"')
    machine.expect(run.ok("ptwr-mode", name).strip() == "emulate", "ptwr_mode= not applied at create")
    client = run.daemon.client()
    try:
        mode = first_mode
        while True:
            answer = client.call("ptwr_mode", dom=name, mode=mode)
            if not answer.get("ok"):
                break  # the guest has ended (destroyed on poweroff)
            machine.expect(answer["mode"] == mode, f"set {mode}: {answer}")
            start = answer["counters"]
            if not client.call("unpause", dom=name).get("ok"):
                break
            moved = PHASE_COUNTER[mode]
            while (answer := client.call("ptwr_mode", dom=name)).get("ok"):
                if delta(answer["counters"], start, moved) > 0:
                    break
                time.sleep(PHASE_POLL_S)
            if not answer.get("ok") or not client.call("pause", dom=name).get("ok"):
                break
            answer = client.call("ptwr_mode", dom=name)
            if not answer.get("ok"):
                break
            machine.expect(answer["mode"] == mode, f"the mode read back: {answer}")
            phases.append((mode, {k: delta(answer["counters"], start, k) for k in start}))
            mode = "emulate" if mode == "writable" else "writable"
        client.call("unpause", dom=name)  # if the last pause came as the guest ended
    finally:
        client.close()
    run.wait_gone(name)
    log = run.console(name)
    machine.expect("pte=direct" in log and "init exited: status 0" in log,
                   f"{name} with its mode flipped: {log[-3000:]}")


def flips(run):
    """forktests (plain-store page-table writes) until both modes had two phases of forking."""
    phases = []
    for i in range(8):
        one_forktest(run, f"flip{i}", phases, "writable" if i % 2 == 0 else "emulate")
        modes = [m for m, _ in phases]
        if modes.count("emulate") >= 2 and modes.count("writable") >= 2:
            return phases, i + 1
    machine.expect(False, f"only {len(phases)} phases in 8 forktests: {phases}")


def refusals(run):
    bad = run.xl("ptwr-mode", "forktest-none", "writable")
    machine.expect(bad.returncode == 1, f"xl ptwr-mode of no domain: {bad.returncode} {bad.stderr}")
    bad = run.xl("ptwr-mode", "0", "fast")
    machine.expect(bad.returncode == 2 and "emulate, writable or adaptive" in bad.stderr, f"a bad mode: {bad}")
    client = run.daemon.client()
    try:
        for fields in ({"dom": "0", "mode": "fast"}, {"dom": "0", "mode": 1}, {"dom": 0}, {"mode": "emulate"},
                       {"dom": "70000"}, {"dom": "0", "mode": ["writable"]}):
            answer = client.call("ptwr_mode", **fields)
            machine.expect(answer.get("ok") is False and answer.get("errno") in (3, 22), f"{fields}: {answer}")
    finally:
        client.close()


def ours(run):
    refusals(run)
    phases, guests = flips(run)
    emulate = [c for m, c in phases if m == "emulate"]
    writable = [c for m, c in phases if m == "writable"]
    for counters in emulate:
        machine.expect(counters["ptwr_faults"] == 0, f"a detach while the domain emulates: {phases}")
    machine.expect(sum(c["ptwr_emulations"] for c in emulate) > 0, f"no emulation while emulate: {phases}")
    machine.expect(sum(c["ptwr_faults"] for c in writable) > 0, f"no detach while writable: {phases}")
    checks = run.hostile_domu()
    serial = run.stop()
    machine.expect("audit: clean" in serial and "audit: FAIL" not in serial,
                   f"the frame audit at the end: {serial[-3000:]}")
    switches = serial.count(": ptwr mode ")
    print(f"ok: ours: {len(phases)} phases of {guests} forktests ({len(emulate)} emulate, {len(writable)} writable; "
          f"{switches} switches logged), emulations {sum(c['ptwr_emulations'] for c in emulate)} while emulate, "
          f"detaches {sum(c['ptwr_faults'] for c in writable)} while writable; hostile domU {checks} lines")


def xen417(run):
    before = run.names()
    for args in (("ptwr-mode", "0"), ("ptwr-mode", "0", "writable")):
        result = run.xl(*args)
        lines = result.stderr.strip().splitlines()
        machine.expect(result.returncode == 1 and len(lines) == 1 and "Xen 4.17" in lines[0],
                       f"xl {' '.join(args)} on Xen 4.17: {result.returncode} {result.stdout!r} {result.stderr!r}")
    refused = run.xl("create", "examples/hello.cfg", 'ptwr_mode="writable"')
    # xl create's failure status is libxl's ERROR_FAIL negated, 3, as Xen's.
    machine.expect(refused.returncode == 3 and "Xen 4.17" in refused.stderr, f"ptwr_mode=writable on Xen 4.17: {refused}")
    machine.expect(run.names() == before, f"a refused create left a domain: {run.names()}")
    checks = run.hostile_domu()  # hello.cfg says ptwr_mode = "emulate": what Xen does
    run.stop()
    print(f"ok: xen417: xl ptwr-mode refused in one line, ptwr_mode=writable refused, hostile domU {checks} lines")


def main():
    build, hv = guest_boot.arguments()
    with pvhvd_client.TestDaemon(build, ["--hypervisor", hv.name], prefix="pvhv-ptwr") as daemon:
        (ours if hv.name == "ours" else xen417)(Run(build, hv, daemon))


if __name__ == "__main__":
    main()
