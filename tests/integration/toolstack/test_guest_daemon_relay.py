"""pvhvd's `relay` op and libxenctrl's `daemon:` transport (tools/PROTOCOL.md): the issue 9
program xc_domu_lifecycle (a domU built, run to its poweroff, destroyed; hostile inputs; two
create/destroy cycles) and xc_relay_check run through the daemon with
PVHV_XENCTRL=daemon:DIR/pvhvd.sock, while `xl list` keeps answering beside them. Hostile relay
clients are dropped and the daemon and the others go on: garbage bytes, an oversized frame, a
buffer and a port that are not the client's, SHUTDOWN, a client leaving mid-frame; what a
client held is released when it goes (its buffers: another client gets as many; its VIRQ: bound
again by the next). On ours and on Xen 4.17."""
import os
import socket
import struct
import subprocess
import sys
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import guest_boot  # noqa: E402
import machine  # noqa: E402
import pvhvd_client  # noqa: E402
import relay_client  # noqa: E402

BUFFER_ALLOC, BUFFER_READ, BIND_VIRQ, UNMASK, SHUTDOWN = 0x82, 0x85, 0x88, 0x8b, 0x8f
VIRQ_DEBUG = 1  # bound by nobody in dom0 (its kernel binds VIRQ_TIMER and VIRQ_TBUF)


class DaemonRelay(relay_client.Client):
    """A relay client through pvhvd: the `relay` op, then frames."""

    def __init__(self, state_dir, timeout=30.0):
        super().__init__(os.path.join(state_dir, "pvhvd.sock"), timeout)
        self.sock.sendall(b'{"id":1,"op":"relay"}\n')
        self.sock.settimeout(timeout)
        line = b""
        while not line.endswith(b"\n"):
            chunk = self.sock.recv(1)
            machine.expect(chunk, "pvhvd closed the relay connection before answering")
            line += chunk
        machine.expect(b'"ok":true' in line, f"relay op: {line!r}")

    def dropped(self, timeout=10.0):
        """True once the daemon has closed the connection (what it sends first is read away)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            self.sock.settimeout(max(0.1, deadline - time.monotonic()))
            try:
                if not self.sock.recv(65536):
                    return True
            except socket.timeout:
                return False
            except ConnectionResetError:
                return True
        return False


def run_through_daemon(build, state, args, timeout):
    env = dict(os.environ, PVHV_XENCTRL=f"daemon:{os.path.join(state, 'pvhvd.sock')}", PVHV_XENCTRL_TIMEOUT_MS="60000")
    env.pop("PVHV_XENCTRL_WINDOW", None)
    return subprocess.run(args, env=env, capture_output=True, text=True, timeout=timeout)


def hostile(daemon):
    state = daemon.state_dir
    garbage = DaemonRelay(state)
    garbage.send_raw(os.urandom(64) + b"PVTR" + os.urandom(200))
    machine.expect(garbage.dropped(), "a client sending garbage was not dropped")
    big = DaemonRelay(state)
    big.open()
    big.send_raw(struct.pack("<IBBHII", relay_client.MAGIC, 1, BUFFER_ALLOC, 0, 40000, 0))
    machine.expect(big.dropped(), "a client announcing an oversized frame was not dropped")
    thief = DaemonRelay(state)
    thief.open()
    thief.send_raw(relay_client.frame(BUFFER_READ, struct.pack("<IQI", thief.seq, 0xffffffffb4000000, 16)))
    machine.expect(thief.dropped(), "a client reading a buffer not its own was not dropped")
    ports = DaemonRelay(state)
    ports.open()
    ports.send_raw(relay_client.frame(UNMASK, struct.pack("<II", ports.seq, 1)))
    machine.expect(ports.dropped(), "a client unmasking a port not its own was not dropped")
    stopper = DaemonRelay(state)
    stopper.open()
    stopper.send_raw(relay_client.frame(SHUTDOWN, struct.pack("<II", stopper.seq, 0)))
    machine.expect(stopper.dropped(), "a client asking for dom0's SHUTDOWN was not dropped")
    half = DaemonRelay(state)
    half.open()
    half.send_raw(relay_client.frame(BUFFER_ALLOC, struct.pack("<II", half.seq, 1))[:10])
    half.close()
    # A client that leaves with a request in flight: its answer is dropped, the buffer freed.
    for _ in range(3):
        leaver = DaemonRelay(state)
        leaver.open()
        leaver.send_raw(relay_client.frame(BUFFER_ALLOC, struct.pack("<II", leaver.seq, 4)))
        leaver.close()
    time.sleep(1)
    # Release: one client takes every buffer it can, and leaves with them.
    first = DaemonRelay(state)
    first.open()
    taken = 0
    while taken < 64:
        try:
            first.alloc(1)
            taken += 1
        except relay_client.RelayError as e:
            machine.expect(e.name == "limit", f"alloc: {e}")
            break
    # The daemon keeps a few one-page buffers (libxenctrl's cache): the rest are the client's,
    # none kept by the three that left.
    machine.expect(taken >= 60, f"only {taken} buffers for a client: the leavers' were not freed")
    virq_port = first.bind_virq(VIRQ_DEBUG)
    first.close()
    time.sleep(1)  # the daemon sees the close and frees on its link
    second = DaemonRelay(state)
    second.open()
    for i in range(taken):
        second.alloc(1)
    second.bind_virq(VIRQ_DEBUG)  # EEXIST if the first client's port had stayed bound
    second.close()
    print(f"relay clients: 6 hostile ones dropped, 3 left with a request in flight; {taken} buffers and VIRQ port {virq_port} released with their client")
    return taken


def main():
    build, hv = guest_boot.arguments()
    with pvhvd_client.TestDaemon(build, ["--hypervisor", hv.name]) as run:
        daemon, state, kernel, initrd = run.daemon, run.state, run.kernel, run.initrd
        # xl list keeps answering while the programs run through the daemon.
        stop = threading.Event()
        lists = {"ok": 0, "bad": []}

        def keep_listing():
            while not stop.is_set():
                r = run.xl("list", timeout=60)
                if r.returncode == 0 and "Domain-0" in r.stdout:
                    lists["ok"] += 1
                else:
                    lists["bad"].append(r.stdout + r.stderr)
                time.sleep(0.2)
        lister = threading.Thread(target=keep_listing, daemon=True)
        lister.start()

        check = run_through_daemon(build, state, [os.path.join(build, "bin", "xc_relay_check")], 300)
        machine.expect(check.returncode == 0 and "xc_relay_check: passed" in check.stdout,
                       f"xc_relay_check through pvhvd: {check.stdout}\n{check.stderr}\n{daemon.text()}")
        t0 = time.monotonic()
        life = run_through_daemon(build, state, [os.path.join(build, "bin", "xc_domu_lifecycle"), "--kernel", kernel,
                                                 "--ramdisk", initrd, "--cmdline", "init=/forktest",
                                                 "--cycles", "2", "--timeout-s", "200"], 600)
        seconds = time.monotonic() - t0
        stop.set()
        lister.join(90)
        print(life.stdout[-3000:])
        machine.expect(life.returncode == 0, f"xc_domu_lifecycle through pvhvd (status {life.returncode}):"
                       f"\n{life.stdout}\n{life.stderr}\n{daemon.text()}")
        machine.expect(lists["ok"] > 0 and not lists["bad"], f"xl list beside them: {lists}")
        print(f"{hv.name}: xc_domu_lifecycle through pvhvd in {seconds:.1f} s; xl list answered {lists['ok']} times meanwhile")

        hostile(daemon)
        again = run_through_daemon(build, state, [os.path.join(build, "bin", "xc_relay_check")], 300)
        machine.expect(again.returncode == 0, f"xc_relay_check after the hostile clients: {again.stdout}\n{again.stderr}")
        client = daemon.client()
        client.ok("hello", version=1)
        client.close()
        pvhvd_client.stop_and_check(daemon, hv)
        print(f"{hv.name}: the relay op passed")


if __name__ == "__main__":
    main()
