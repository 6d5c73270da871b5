"""Hostile xenstore clients against pvhvd's store, from inside real guests (our kernel with
`xenbus=hostile hostile=KIND`, guest/xenbus/xenbus_hostile.cpp): a domU that fills its node
quota, opens transactions it never ends and floods requests without reading answers (the
store answers ENOSPC, stops reading while answers pile up, answers every request once the
guest reads, and still serves it), one that writes a header announcing an oversized payload
and one that lies about req_prod (both cut off with XENSTORE_ERROR_PROTO / _RINGIDX). The
socket ops xenstore_read / _write / _ls and build/bin/xenstore-ls read the calm domain's
nodes (bad paths EINVAL, a missing node ENOENT). Meanwhile
a well-behaved domU keeps its ring: `xl shutdown -w` of it is obeyed afterwards; the daemon
answers `xl list` throughout, records each incident in the domain's console log and history,
and gives every frame back. On ours and on Xen 4.17 with our relay dom0."""
import os
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import guest_boot  # noqa: E402
import machine  # noqa: E402
import toolstack_scenario  # noqa: E402

WAITING = "xenbus: waiting for control/shutdown (store connected)"


def hostile(scenario, kind):
    scenario.xl("create", "examples/hello.cfg", f'name="{kind}"', f'extra="xenbus=hostile hostile={kind}"')


def store_ops(s, build):
    """The socket ops and build/bin/xenstore-ls on the calm domain's nodes."""
    domid = s.listed()["calm"][0]
    home = f"/local/domain/{domid}"
    ls = subprocess.run([os.path.join(build, "bin", "xenstore-ls"), home], env=s.env, capture_output=True,
                        text=True, timeout=60)
    machine.expect(ls.returncode == 0 and 'name = "calm"\n' in ls.stdout and f'domid = "{domid}"\n' in ls.stdout
                   and ' shutdown = ""\n' in ls.stdout and ' feature-poweroff = "1"\n' in ls.stdout,
                   f"xenstore-ls {home}: {ls.returncode}\n{ls.stdout}{ls.stderr}")
    client = s.daemon.client()
    try:
        client.ok("xenstore_write", path=f"{home}/data/probe", value="from dom0")
        machine.expect(client.ok("xenstore_read", path=f"{home}/data/probe")["value"] == "from dom0", "read back")
        nodes = client.ok("xenstore_ls", path=f"{home}/control")["nodes"]
        machine.expect({n["name"] for n in nodes} >= {"shutdown", "feature-poweroff"}, f"ls control: {nodes}")
        for bad in ("relative/path", "/a//b", "/" + "x" * 5000):
            answer = client.call("xenstore_read", path=bad)
            machine.expect(not answer["ok"] and answer["errno"] == 22, f"path {bad[:20]!r}: {answer}")
        answer = client.call("xenstore_read", path=f"{home}/no/such/node")
        machine.expect(not answer["ok"] and answer["errno"] == 2, f"a missing node: {answer}")
        answer = client.call("xenstore_write", path=f"{home}/data/x", value=5)
        machine.expect(not answer["ok"] and answer["errno"] == 22, f"a value that is not a string: {answer}")
    finally:
        client.close()
    missing = subprocess.run([os.path.join(build, "bin", "xenstore-ls"), "/no/such"], env=s.env,
                             capture_output=True, text=True, timeout=60)
    machine.expect(missing.returncode == 1 and "xenstore-ls: " in missing.stderr, f"xenstore-ls /no/such: {missing}")


def run(build, hv):
    with tempfile.TemporaryDirectory(prefix="pvhv-xs-hostile") as state:
        s = toolstack_scenario.Scenario(build, hv, state, show=False)
        try:
            s.start_daemon()
            baseline = s.free_memory()
            s.xl("create", "examples/hello.cfg", 'name="calm"', 'extra="xenbus=wait"')
            s.wait_console("calm", WAITING)
            store_ops(s, build)

            started = time.monotonic()
            for kind in ("garbage", "ringidx", "flood"):
                hostile(s, kind)
            for kind in ("garbage", "ringidx", "flood"):
                s.wait_gone(kind, timeout=240)  # each powers off when done; on_poweroff=destroy
                machine.expect("calm" in s.listed(), "the calm domain went away")
            log = s.console_log("garbage")
            machine.expect("garbage: the store stopped serving us (ring error 3)" in log, f"garbage: {log[-3000:]}")
            machine.expect("[pvhvd] xenstore: a malformed message on the ring" in log, f"garbage: {log[-3000:]}")
            log = s.console_log("ringidx")
            machine.expect("ringidx: the store stopped serving us (ring error 2)" in log, f"ringidx: {log[-3000:]}")
            machine.expect("[pvhvd] xenstore: ring indexes out of bounds" in log, f"ringidx: {log[-3000:]}")

            log = s.console_log("flood")
            lines = "\n".join(line for line in log.splitlines() if "hostile" in line or "[pvhvd]" in line)
            written = [line for line in log.splitlines() if "quota:" in line and "nodes written" in line]
            machine.expect(written and " 0 refused" not in written[0], f"flood: no quota hit:\n{lines}")
            machine.expect("quota: data/q removed again" in log, f"flood:\n{lines}")
            machine.expect("transactions: 10 opened and never ended, 2 refused with ENOSPC" in log, f"flood:\n{lines}")
            flooded = [line for line in log.splitlines() if "reads sent without reading" in line]
            machine.expect(flooded and "; 0 bytes of them still unread" not in flooded[0],
                           f"flood: the store read every request while none was answered:\n{lines}")
            sent = flooded[0].split("flood: ")[1].split(" ")[0]
            machine.expect(f"flood: {sent} of {sent} answered once we read" in log, f"flood:\n{lines}")
            machine.expect("still served: name = flood" in log, f"flood:\n{lines}")
            machine.expect("[pvhvd] xenstore:" in log and "requests answered with an error" in log and
                           "bytes of answers unread" in log, f"flood: the daemon's records:\n{lines}")
            print(f"hostile guests done in {time.monotonic() - started:.1f} s; flood's lines:\n{lines}")

            # The calm domain was served all along: it obeys control/shutdown.
            s.xl("shutdown", "-w", "calm", timeout=180)
            s.wait_gone("calm")
            machine.expect("xenbus: control/shutdown asks for poweroff" in s.console_log("calm"), "calm's console")
            machine.expect(s.daemon.proc.poll() is None, "pvhvd died")
            free = s.free_memory()
            deadline = time.monotonic() + 30
            while free != baseline and time.monotonic() < deadline:
                time.sleep(1)
                free = s.free_memory()
            machine.expect(free == baseline, f"free memory {free} MiB after the domUs, {baseline} before")
            status = s.daemon.stop()
            machine.expect(status == 0, f"pvhvd's exit status {status}:\n{s.daemon.text()}")
            s.daemon = None
        finally:
            s.cleanup()


def main():
    build, hv = guest_boot.arguments()
    run(build, hv)
    print(f"ok: {hv.name}: hostile xenstore clients answered or cut off; the other domain kept its ring")


if __name__ == "__main__":
    main()
