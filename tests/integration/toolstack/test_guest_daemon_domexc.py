"""pvhvd applies on_reboot / on_poweroff / on_crash on VIRQ_DOM_EXC, not by polling: the daemon
runs with its safety read of the domain list 10 minutes apart, so only the event can make it
act within the test's minute. A domU told to reboot (the client gone at once: no xl running)
is rebuilt under a new domid with the same name and uuid (its record says so); a burst of four
domains shut down and crashed back to back loses none (each record goes, each domain is
destroyed); free memory is back at its baseline. On ours and on Xen 4.17."""
import glob
import json
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import guest_boot  # noqa: E402
import machine  # noqa: E402
import pvhvd_client  # noqa: E402


def records(state):
    found = {}
    for path in glob.glob(os.path.join(state, "domain-*.json")):
        try:
            with open(path) as f:
                record = json.load(f)
        except (OSError, ValueError):
            continue  # replaced under us (atomically: the next look sees the new one)
        found[record["name"]] = record
    return found


def main():
    build, hv = guest_boot.arguments()
    with pvhvd_client.TestDaemon(build, ["--hypervisor", hv.name, "--safety-poll-ms", "600000"]) as run:
        daemon, state = run.daemon, run.state
        config = {"kernel": run.kernel, "ramdisk": run.initrd, "cmdline": "init=/forktest", "memory": 16,
                  "on_poweroff": "destroy", "on_reboot": "restart", "on_crash": "destroy"}
        machine.expect("watching VIRQ_DOM_EXC" in daemon.text(), f"the daemon does not watch the VIRQ:\n{daemon.text()}")
        client = daemon.client(timeout=300)
        baseline = client.ok("info")["free_pages"]

        # A reboot with nobody listening: the daemon alone rebuilds the domain.
        created = client.ok("create", config=dict(config, name="rb"), paused=True)
        old = created["domid"]
        # Paused, its xenbus has not offered PV control: xl's -F (SCHEDOP_remote_shutdown).
        client.ok("reboot", dom="rb", fallback=True)
        client.close()
        t0 = time.monotonic()

        def rebuilt():
            r = records(state).get("rb")
            return r if r and r["domid"] not in (0, old) and r["state"] == "running" else None
        record = pvhvd_client.wait_for("rb rebuilt under a new domid after its reboot", rebuilt, 60, daemon, step=0.2)
        took = time.monotonic() - t0
        machine.expect(record["uuid"] == created["uuid"], f"the rebuilt domain has another uuid: {record}")
        machine.expect([h["state"] for h in record["history"] if h["state"].startswith(("shutdown", "restart"))] ==
                       ["shutdown reboot: restart", "restart"], f"history: {record['history']}")
        print(f"{hv.name}: rb d{old} rebooted as d{record['domid']} {took:.1f} s after the request, no client connected")

        # A burst: four domains shut down (two powered off, two crashed) back to back.
        client = daemon.client(timeout=300)
        burst = [f"b{i}" for i in range(4)]
        for name in burst:
            client.ok("create", config=dict(config, name=name), paused=True)
        for name in burst:
            client.ok("shutdown", dom=name, fallback=True)
        client.close()
        t0 = time.monotonic()
        pvhvd_client.wait_for("every domain of the burst destroyed", lambda: not set(burst) & set(records(state)), 60, daemon, step=0.2)
        print(f"{hv.name}: a burst of {len(burst)} shutdowns applied in {time.monotonic() - t0:.1f} s")
        client = daemon.client(timeout=300)
        names = {d["name"] for d in client.ok("list")["domains"]}
        machine.expect(not set(burst) & names, f"a domain of the burst survived: {names}")
        text = daemon.text()
        for name in burst:
            machine.expect(f"{name} (d" in text and "shut down (poweroff): destroy" in text, f"{name}: no shutdown line")

        client.ok("destroy", dom="rb")
        free = pvhvd_client.settle_free(client, baseline)
        machine.expect(free == baseline, f"free pages {free}, baseline {baseline}")
        machine.expect(not records(state), f"records left: {list(records(state))}")
        client.close()
        pvhvd_client.stop_and_check(daemon, hv)
        print(f"{hv.name}: pvhvd on VIRQ_DOM_EXC passed")


if __name__ == "__main__":
    main()
