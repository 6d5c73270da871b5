"""pvhvd end to end on a real machine (ours or Xen 4.17, --hypervisor): the daemon starts the
machine, refuses bad creates with xl's messages, survives `kill -9` during a create (the
half-built domain is destroyed on restart) and after one (the list is unchanged), answers other
clients while a build runs (two clients creating one name: one wins; 10^4 malformed requests;
a client that never speaks), serves the domU's console (`init exited: status 0` in its log and
on a console client), applies on_poweroff=destroy with no client connected, gives every frame
back, and stops the machine on SIGTERM."""
import json
import os
import random
import socket
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import guest_boot  # noqa: E402
import machine  # noqa: E402
import pvhvd_client  # noqa: E402


def domains(client):
    return {d["domid"]: d for d in client.ok("list")["domains"]}


def bad_creates(client, kernel, initrd):
    answer = client.call("create", config={"kernel": kernel})
    machine.expect(answer["errno"] == 22 and answer["error"] == "Domain name must be specified.", f"no name: {answer}")
    answer = client.call("create", config={"name": "nokernel", "kernel": "/nonexistent/kernel"})
    machine.expect(not answer["ok"] and answer["errno"] == 2 and "/nonexistent/kernel" in answer["error"],
                   f"a kernel that does not exist: {answer}")
    answer = client.call("create", config={"name": "huge", "kernel": kernel, "memory": 1 << 20})
    machine.expect(not answer["ok"] and answer["errno"] == 12 and answer["error"] == "failed to free memory for the domain",
                   f"memory larger than free: {answer}")
    answer = client.call("create", config={"name": "Domain-0", "kernel": kernel})
    machine.expect(answer["error"] == 'Domain with name "Domain-0" already exists.', f"Domain-0: {answer}")
    answer = client.call("create", config={"name": "x", "kernel": kernel, "on_crash": "explode"})
    machine.expect(answer["errno"] == 22, f"bad on_crash: {answer}")
    answer = client.call("destroy", dom="nosuchdomain")
    machine.expect(answer["errno"] == 3 and answer["error"] == "nosuchdomain is an invalid domain identifier",
                   f"destroy of an unknown name: {answer}")
    machine.expect(list(domains(client)) == [0], "the bad creates left a domain")


def storm(daemon, count=10000):
    """Malformed, truncated, oversized and unknown requests; every line answered or the client
    dropped (oversized), the daemon alive after each batch."""
    rng = random.Random(10)
    seeds = [b'{"id":1,"op":"list"}', b'{"id":2,"op":"create","config":{"name":"s","kernel":"/k","memory":8}}',
             b'{"id":3,"op":"destroy","dom":"nobody"}', b'{"id":4,"op":"pause","dom":"nobody9"}']
    sent = answered = 0
    client = daemon.client(timeout=120)
    batch = []
    i = 0
    while sent < count:
        i += 1
        kind = rng.randrange(5)
        seed = rng.choice(seeds)
        if kind == 0:
            line = seed[:rng.randrange(len(seed))]  # truncated
        elif kind == 1:
            line = bytearray(seed)
            for _ in range(rng.randrange(1, 4)):
                line[rng.randrange(len(line))] = rng.randrange(256)
            line = bytes(line)
        elif kind == 2:
            line = json.dumps({"id": i, "op": rng.choice(["frob", "", "LIST", "relay2", "x" * 300])}).encode()
        elif kind == 3:
            line = json.dumps({"id": i, "op": "destroy", "dom": rng.choice([5, None, [], "", "32767", "-1"])}).encode()
        else:
            line = bytes(rng.randrange(1, 256) for _ in range(rng.randrange(1, 64)))
        line = line.replace(b"\n", b" ")
        if b'"op":"create"' in line and b'"name":"s"' in line:
            continue  # an intact create would build a domain: not what a storm is about
        batch.append(line)
        if len(batch) == 200:
            client.sock.sendall(b"\n".join(batch) + b"\n")
            for _ in batch:
                answer = client.read_answer()
                machine.expect("ok" in answer, f"answer without ok: {answer}")
                answered += 1
            sent += len(batch)
            batch = []
    # Oversized: answered E2BIG, then dropped.
    client.sock.sendall(b"{" + b" " * (1 << 20) + b"}\n")
    answer = client.read_answer()
    machine.expect(answer["errno"] == 7 and answer["id"] is None, f"oversized: {answer}")
    try:
        more = client.sock.recv(1)
        machine.expect(more == b"", "the client with an oversized line was not dropped")
    except ConnectionResetError:
        pass
    client.close()
    # A client that disconnects mid-request.
    half = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    half.connect(os.path.join(daemon.state_dir, "pvhvd.sock"))
    half.sendall(b'{"id":1,"op":"li')
    half.close()
    return sent, answered


def main():
    build, hv = guest_boot.arguments()
    with pvhvd_client.TestDaemon(build, ["--hypervisor", hv.name]) as run:
        daemon, state, kernel, initrd = run.daemon, run.state, run.kernel, run.initrd
        config = {"name": "forktest", "kernel": kernel, "ramdisk": initrd, "cmdline": "init=/forktest",
                  "memory": 32, "on_poweroff": "destroy"}
        silent = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)  # connects, never speaks
        silent.connect(os.path.join(state, "pvhvd.sock"))
        client = daemon.client()
        hello = client.ok("hello", version=1)
        machine.expect(hello["hypervisor"] == ("pvhv" if hv.name == "ours" else "xen-4.17"), f"hello: {hello}")
        machine.expect(client.call("hello", version=2)["ok"] is False, "hello version 2 accepted")
        baseline = client.ok("info")["free_pages"]
        bad_creates(client, kernel, initrd)

        # kill -9 during a create: the restarted daemon destroys the half-built domain. Over
        # the relay's bulk window a small domU is built in a fraction of a second, so this
        # one gets a 96 MiB ramdisk of random bytes (no page of it is skipped as zero): its
        # build takes seconds, time enough to be killed in the middle of it.
        big_ramdisk = os.path.join(run.tmp, "random.img")
        with open(big_ramdisk, "wb") as f:
            f.write(os.urandom(96 << 20))
        half = daemon.client(timeout=600)
        half.send_line(json.dumps({"id": 1, "op": "create",
                                   "config": dict(config, name="half", ramdisk=big_ramdisk, memory=160)}).encode())

        def half_record():
            for name in os.listdir(state):
                if name.startswith("domain-") and name.endswith(".json"):
                    with open(os.path.join(state, name)) as f:
                        record = json.load(f)
                    if record["name"] == "half" and record["domid"]:
                        return record
            return None
        record = pvhvd_client.wait_for("the half-built domain's record names its domid", half_record, 120, daemon)
        machine.expect(record["state"] == "building", f"record: {record}")
        daemon.kill9()
        print(f"pvhvd: kill -9 while d{record['domid']} was being built")
        daemon.restart_attached()
        client = daemon.client()
        machine.expect(list(domains(client)) == [0], f"the half-built domain survived: {domains(client)}")
        machine.expect("half built" in daemon.text(), "the restart did not say it destroyed the half-built domain")
        after = pvhvd_client.settle_free(client, baseline)
        machine.expect(after == baseline, f"after the half-built domain: free pages {after}, baseline {baseline}")

        # Two clients create one name: one wins, the other gets Xen's message; the daemon
        # keeps answering others (a list, the storm) while the build runs.
        first, second = daemon.client(timeout=900), daemon.client()
        first.send_line(json.dumps({"id": 1, "op": "create", "config": config, "paused": True}).encode())
        time.sleep(0.5)
        answer = second.call("create", config=config)
        machine.expect(answer["ok"] is False and answer["errno"] == 17 and
                       answer["error"] == 'Domain with name "forktest" already exists.', f"second create: {answer}")
        start = time.monotonic()
        listed = domains(client)
        list_seconds = time.monotonic() - start
        sent, answered = storm(daemon)
        print(f"pvhvd: during the build: list answered in {list_seconds:.2f} s; {answered} of {sent} storm requests answered")
        machine.expect(sent >= 10000 and answered == sent, "storm: not every request answered")
        t0 = time.monotonic()
        created = first.read_answer()
        machine.expect(created.get("ok") is True, f"create: {created}\n{daemon.text()}")
        print(f"pvhvd: forktest is d{created['domid']}, built in {time.monotonic() - t0:.0f} s after the storm")
        before = domains(client)
        dom = before[created["domid"]]
        machine.expect(dom["name"] == "forktest" and dom["paused"] and dom["uuid"] == created["uuid"] and
                       dom["mem_kb"] >= 32 * 1024 - 4096, f"list: {dom}")

        # kill -9 after the create: the restarted daemon's list is the same.
        daemon.kill9()
        daemon.restart_attached()
        client = daemon.client()
        after_restart = domains(client)
        keys = ("domid", "name", "uuid", "paused", "mem_kb", "max_mem_kb", "config")
        machine.expect({d: [v[k] for k in keys] for d, v in after_restart.items()} ==
                       {d: [v[k] for k in keys] for d, v in before.items()},
                       f"list changed across kill -9: {before} -> {after_restart}")

        # The console: a console client sees the output too; on_poweroff=destroy applies with
        # no other client connected.
        console = daemon.client(timeout=300)
        console.ok("console", dom="forktest")
        client.ok("unpause", dom="forktest")
        client.close()
        seen = b""
        deadline = time.monotonic() + 300
        while b"init exited: status 0" not in seen and time.monotonic() < deadline:
            try:
                chunk = console.sock.recv(4096)
            except socket.timeout:
                break
            if not chunk:
                break
            seen += chunk
        machine.expect(b"init exited: status 0" in seen, f"console client saw: {seen[-2000:]!r}")
        console.close()
        log = os.path.join(state, "console-forktest.log")
        client = daemon.client()
        pvhvd_client.wait_for("forktest destroyed by on_poweroff", lambda: list(domains(client)) == [0], 120, daemon)
        with open(log, "rb") as f:
            machine.expect(b"init exited: status 0" in f.read(), "the console log lacks init's exit")
        machine.expect(not [n for n in os.listdir(state) if n.startswith("domain-")], "a record outlived its domain")
        after = pvhvd_client.settle_free(client, baseline)
        machine.expect(after == baseline, f"free pages {after}, baseline {baseline}")
        client.ok("hello")
        silent.close()
        client.close()
        pvhvd_client.stop_and_check(daemon, hv)
        print(f"{hv.name}: pvhvd lifecycle passed")


if __name__ == "__main__":
    main()
