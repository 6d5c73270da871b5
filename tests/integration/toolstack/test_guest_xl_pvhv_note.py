"""The PVHV note for domUs the toolstack builds (issue 11's writable-pagetable rule): our kernel
says by its `PVHV` ELF note that it reads an unhooked L2 entry as its table; the hypervisor's
boot builder reads the note itself, libxenguest's builder passes it on (pvhv's ptwr-mode domctl,
kPtwrReadsUnhookedSet) before the domain first runs.

On ours, with ptwr_mode="writable": forktest created by `xl create` (pte=direct: plain-store
page-table writes, to tables its address space reaches) is told so (the hypervisor's line) and
the hypervisor's counters show unhooks while it runs; Debian's Linux created the same way (no
note: it translates a pmd's frame only when present) is never told so and nothing of it is
unhooked: its writes to reachable L1s are emulated. On Xen 4.17 (no such domctl: -ENOSYS, and it
never unhooks) the builder goes on: forktest is created and runs to its end. On both, Linux's
`poweroff -f` ("reboot: System halted": a domU has no ACPI power-off) is shutdown reason
poweroff. The daemon ends cleanly, on ours the frame audit clean.
"""
import os
import re
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "lib"))
import guest_boot  # noqa: E402
import machine  # noqa: E402
import pvhvd_client  # noqa: E402
from test_guest_xl_ptwr_mode import Run  # noqa: E402

NOTE_LINE = re.compile(r"d(\d+): kernel reads unhooked entries: yes \(PVHV note from its builder\)")


def counters(run):
    client = run.daemon.client()
    try:
        answer = client.call("ptwr_mode", dom="0")
        machine.expect(answer.get("ok"), f"ptwr_mode of dom0: {answer}")
        return answer["counters"]
    finally:
        client.close()


def forktest(run, name, mode, cmdline="init=/forktest pte=direct"):
    run.ok("create", "examples/forktest.cfg", f'name="{name}"', f'ptwr_mode="{mode}"', f'cmdline="{cmdline}"')
    run.wait_gone(name)
    log = run.console(name)
    machine.expect("init exited: status 0" in log, f"{name}: {log[-3000:]}")


def linux(run, name, mode):
    """Debian's Linux through xl, one round of its fork loop, then /init's `poweroff -f`: with no
    ACPI power-off handler in a domU, Linux halts ("reboot: System halted") and its Xen halt is
    SCHEDOP_shutdown(poweroff), which the daemon sees as the poweroff it is (on ours and Xen)."""
    run.ok("create", "examples/linux.cfg", f'name="{name}"', f'ptwr_mode="{mode}"',
           'extra="console=hvc0 bench_iterations=1"', timeout=900)
    deadline = time.monotonic() + 900
    while "linux-init: done" not in run.console(name):
        machine.expect(time.monotonic() < deadline, f"Linux did not finish: {run.console(name)[-3000:]}")
        time.sleep(2)
    run.wait_gone(name, timeout=300)
    log = run.console(name)
    machine.expect("linux-init: done, status 0" in log, f"Linux's loop: {log[-3000:]}")
    machine.expect("reboot: System halted" in log, f"Linux's poweroff -f: {log[-2000:]}")
    reason = re.search(rf"{name} \(d\d+\) shut down \((\w+)\)", run.daemon.text())
    machine.expect(reason is not None and reason.group(1) == "poweroff",
                   f"Linux's shutdown reason: {reason.group(0) if reason else run.daemon.text()[-2000:]}")


def ours(run):
    start = counters(run)
    forktest(run, "noted", "writable")
    after_forktest = counters(run)
    unhooks = after_forktest["ptwr_unhooks"] - start["ptwr_unhooks"]
    machine.expect(unhooks > 0, f"forktest under writable through xl: no unhook ({start} -> {after_forktest})")
    linux(run, "linux", "writable")
    after_linux = counters(run)
    linux_unhooks = after_linux["ptwr_unhooks"] - after_forktest["ptwr_unhooks"]
    linux_emulations = after_linux["ptwr_emulations"] - after_forktest["ptwr_emulations"]
    machine.expect(linux_unhooks == 0, f"Linux (no PVHV note) had {linux_unhooks} L1s unhooked")
    machine.expect(linux_emulations > 0, "Linux's page-table writes were not emulated")
    serial = run.stop()
    told = NOTE_LINE.findall(serial)
    machine.expect(len(told) == 1, f"the hypervisor was told of {len(told)} notes, not forktest's one: {told}")
    machine.expect("audit: clean" in serial and "audit: FAIL" not in serial, f"the audit: {serial[-3000:]}")
    print(f"ok: ours: forktest through xl under writable: {unhooks} unhooks (its PVHV note passed on to d{told[0]}); "
          f"Linux: 0 unhooks, {linux_emulations} emulations")


def xen417(run):
    # The builder's note op is -ENOSYS there: harmless. (pte=direct is left out: our kernel's
    # plain-store PTE writes panic it as a Xen 4.17 domU, a known gap of its own.)
    forktest(run, "noted", "emulate", "init=/forktest")
    linux(run, "linux", "emulate")
    run.stop()
    print("ok: xen417: forktest (with the PVHV note) built and run through xl: the note op's -ENOSYS is harmless; "
          "Linux's poweroff -f is a poweroff")


def main():
    build, hv = guest_boot.arguments()
    with pvhvd_client.TestDaemon(build, ["--hypervisor", hv.name], prefix="pvhv-note") as daemon:
        (ours if hv.name == "ours" else xen417)(Run(build, hv, daemon))


if __name__ == "__main__":
    main()
