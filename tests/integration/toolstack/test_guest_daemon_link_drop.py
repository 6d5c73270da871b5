"""pvhvd's relay link dropping (tools/PROTOCOL.md "The link dropping"): the daemon, restarted
with --attach and its link through a proxy the test controls (--link-via), loses the link
and gets it back, each time with one line in its log, never dying:

- cut while idle: reported and reconnected, `xl list` unchanged;
- cut while a client's request is in flight (right after the hypercall of `shutdown -F` reached
  dom0, its answer lost): the client's error is ECONNRESET; while the proxy refuses the
  reconnect, requests answer EAGAIN; once back, the exception the daemon missed is applied
  (on_poweroff=destroy);
- cut in the middle of a frame the daemon was sending: the cut frame is completed as at
  --attach and the new session opens;
- dom0 silent (the proxy holds its bytes) for longer than --link-timeout-ms: a drop too;
- after all that: a domU created reaches its console, `xl shutdown -w` is honoured by a guest
  whose xenstore ring crossed every drop and by the new one, free memory is back at baseline,
  and the machine stops cleanly (ours: the frame audit clean). On ours and on Xen 4.17."""
import os
import select
import socket
import struct
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import guest_boot  # noqa: E402
import machine  # noqa: E402
import pvhvd_client  # noqa: E402
import relay_client  # noqa: E402
import toolstack_scenario  # noqa: E402

WAITING = "xenbus: waiting for control/shutdown (store connected)"
SCHED_OP = 29  # __HYPERVISOR_sched_op: the daemon makes it only for SCHEDOP_remote_shutdown
ECONNRESET, EAGAIN = 104, 11
MAGIC = struct.pack("<I", relay_client.MAGIC)
# dom0 silent this long drops the link; a request over the serial link (a build's 4 KiB foreign
# writes on Xen 4.17 under load) can take several seconds, so not less.
LINK_TIMEOUT_MS = 20000


class LinkProxy:
    """A socket between the daemon and QEMU's relay socket: forwards bytes both ways, and on
    request cuts the connection (now, after a hypercall frame of a number, or inside the next
    frame the daemon sends), refuses connections, or holds what dom0 sends."""

    def __init__(self, path, upstream):
        self.path, self.upstream = path, upstream
        self.listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.listener.bind(path)
        self.listener.listen(4)
        self.lock = threading.Lock()
        self.pair = None
        self.refuse = False
        self.hold = False
        self.cut_after_hypercall = None
        self.cut_inside_frame = None  # bytes of the next frame forwarded before the cut
        self.pending = b""  # the daemon's bytes while a frame is looked for
        self.cuts = 0
        self.connections = 0
        self.stopping = False
        self.thread = threading.Thread(target=self.run, daemon=True)
        self.thread.start()

    def cut(self):
        with self.lock:
            self._cut()

    def _cut(self):
        if self.pair:
            for s in self.pair:
                s.close()
            self.pair = None
            self.cuts += 1
        self.pending = b""
        self.hold = False
        self.cut_after_hypercall = self.cut_inside_frame = None

    def stop(self):
        self.stopping = True
        self.cut()
        self.listener.close()

    def _accept(self):
        daemon_side, _ = self.listener.accept()
        if self.refuse:
            daemon_side.close()
            return
        up = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        deadline = time.monotonic() + 10
        while True:
            try:
                up.connect(self.upstream)
                break
            except OSError:
                if time.monotonic() > deadline:
                    up.close()
                    daemon_side.close()
                    return
                time.sleep(0.1)
        with self.lock:
            self._cut() if self.pair else None
            self.pair = (daemon_side, up)
            self.connections += 1

    def _from_daemon(self, data):
        """Under the lock: the daemon's bytes to QEMU, frame by frame while a cut is armed."""
        daemon_side, up = self.pair
        if self.cut_after_hypercall is None and self.cut_inside_frame is None:
            up.sendall(data)
            return
        self.pending += data
        while self.pair:
            start = self.pending.find(MAGIC)
            if start != 0:  # no frame here (completing zeros): forwarded as they are
                keep = start if start > 0 else max(0, len(self.pending) - 3)
                up.sendall(self.pending[:keep])
                self.pending = self.pending[keep:]
                if start < 0:
                    return
            if len(self.pending) < relay_client.HEADER.size:
                return
            length = relay_client.HEADER.unpack_from(self.pending)[4]
            total = relay_client.HEADER.size + length
            if len(self.pending) < total:
                return
            frame, self.pending = self.pending[:total], self.pending[total:]
            kind = frame[5]
            if self.cut_inside_frame is not None:
                up.sendall(frame[:self.cut_inside_frame])
                time.sleep(0.3)  # QEMU reads what was sent before it sees the close
                self._cut()
                return
            up.sendall(frame)
            if kind == relay_client.HYPERCALL and struct.unpack_from("<I", frame, 20)[0] == self.cut_after_hypercall:
                self.hold = True  # its answer never reaches the daemon
                time.sleep(0.5)
                self._cut()
                return

    def run(self):
        while not self.stopping:
            with self.lock:
                sockets = [self.listener] + (list(self.pair) if self.pair else [])
            try:
                ready, _, _ = select.select(sockets, [], [], 0.1)
            except (OSError, ValueError):
                continue
            for s in ready:
                if s is self.listener:
                    try:
                        self._accept()
                    except OSError:
                        pass
                    continue
                with self.lock:
                    if not self.pair or s not in self.pair:
                        continue
                    try:
                        data = s.recv(65536)
                    except OSError:
                        data = b""
                    if not data:
                        self._cut()
                        continue
                    try:
                        if s is self.pair[0]:
                            self._from_daemon(data)
                        elif not self.hold:
                            self.pair[0].sendall(data)
                    except (OSError, TypeError):
                        self._cut()


def main():
    build, hv = guest_boot.arguments()
    with tempfile.TemporaryDirectory(prefix="pvhv-linkdrop") as state:
        s = toolstack_scenario.Scenario(build, hv, state, show=False)
        proxy = None
        try:
            s.start_daemon()
            baseline = s.free_memory()
            # hello's xenbus waits for control/shutdown: its ring must survive every drop.
            s.xl("create", "examples/hello.cfg", 'extra="xenbus=wait"')
            s.wait_console("hello", WAITING, timeout=300)
            # sd stays paused: its shutdown is the request cut in flight.
            s.xl("create", "-p", "examples/hello.cfg", 'name="sd"')
            before = s.listed()
            s.daemon.kill9()
            proxy = LinkProxy(os.path.join(state, "proxy.sock"), os.path.join(state, "com2.sock"))
            s.daemon = pvhvd_client.Daemon(build, state, ["--attach", os.path.join(state, "com2.sock"), "--link-via",
                                                          proxy.path, "--link-timeout-ms", str(LINK_TIMEOUT_MS)])

            def same_list(when):
                after = s.listed()
                machine.expect({k: v[:3] for k, v in after.items()} == {k: v[:3] for k, v in before.items()},
                               f"xl list changed {when}: {before} -> {after}\n{s.daemon.text()}")

            def drops():
                return s.daemon.text().count("relay link down")

            def backs():
                return s.daemon.text().count("relay link back")

            def wait_back(n, what):
                pvhvd_client.wait_for(f"the link back after {what}", lambda: backs() >= n, 120, s.daemon, step=0.2)
                machine.expect(drops() == n, f"{drops()} drop lines for {n} drops:\n{s.daemon.text()}")
                machine.expect(s.daemon.proc.poll() is None, f"pvhvd died:\n{s.daemon.text()}")

            same_list("across kill -9")

            # 1. Cut while idle.
            proxy.cut()
            wait_back(1, "an idle cut")
            line = [l for l in s.daemon.text().splitlines() if "relay link down" in l][0]
            machine.expect("Connection reset by peer" in line, f"the drop's line: {line}")
            same_list("across an idle cut")

            # 2. A request in flight: sd's shutdown reaches dom0, its answer is lost; the proxy then
            # refuses the reconnect for a while, and requests meanwhile answer EAGAIN.
            client = s.daemon.client(timeout=120)
            proxy.refuse = True
            proxy.cut_after_hypercall = SCHED_OP
            answer = client.call("shutdown", dom="sd", fallback=True)
            machine.expect(answer.get("ok") is False and answer.get("errno") == ECONNRESET,
                           f"shutdown cut in flight: {answer}")
            pvhvd_client.wait_for("the drop reported", lambda: drops() == 2, 30, s.daemon, step=0.2)
            answer = client.call("list")
            machine.expect(answer.get("ok") is False and answer.get("errno") == EAGAIN, f"list while down: {answer}")
            machine.expect(client.ok("hello", version=1)["daemon"] == "pvhvd", "hello while down")
            time.sleep(3)
            proxy.refuse = False
            wait_back(2, "a cut in flight")
            # The exception came while the link was down: on_poweroff=destroy applied after it.
            s.wait_gone("sd")
            machine.expect("sd (d" in s.daemon.text() and "shut down (poweroff): destroy" in s.daemon.text(),
                           f"sd's poweroff not applied:\n{s.daemon.text()}")
            client.close()
            before.pop("sd")
            same_list("across a cut in flight")

            # 3. Cut inside a frame the daemon sends (the next one: a monitor tick's or a request's).
            proxy.cut_inside_frame = 7
            client = s.daemon.client(timeout=120)
            client.call("info")  # something to send, if the daemon is idle; its answer may be the error
            client.close()
            wait_back(3, "a cut inside a frame")
            same_list("across a cut inside a frame")

            # 4. dom0 silent: the proxy holds its bytes; the request times out after LINK_TIMEOUT_MS.
            proxy.hold = True
            t0 = time.monotonic()
            client = s.daemon.client(timeout=120)
            answer = client.call("info")
            client.close()
            machine.expect(answer.get("ok") is False, f"info with dom0 silent: {answer}")
            wait_back(4, "dom0's silence")
            silent = [l for l in s.daemon.text().splitlines() if "relay link down" in l][-1]
            machine.expect("timed out" in silent, f"the silence's line: {silent}")
            print(f"{hv.name}: dom0 silent: link down and back in {time.monotonic() - t0:.1f} s")
            same_list("across dom0's silence")

            # After the drops: a new domU reaches its console (over the serial link: minutes on a
            # loaded host), and both guests obey xl shutdown -w.
            s.xl("create", "examples/hello.cfg", 'name="late"', 'extra="xenbus=wait"', timeout=600)
            s.wait_console("late", WAITING, timeout=300)
            for name in ("hello", "late"):
                result = s.xl("shutdown", "-w", name, timeout=300)
                machine.expect("PV control interface not available" not in result.stderr, result.stderr)
                s.wait_gone(name)
                machine.expect("xenbus: control/shutdown asks for poweroff" in s.console_log(name),
                               f"{name}'s console: {s.console_log(name)[-2000:]}")
            s.expect_free_memory(baseline, 60)
            machine.expect(s.daemon.proc.poll() is None, "pvhvd died")
            print(f"{hv.name}: {drops()} drops, each reported once and reconnected; proxy connections "
                  f"{proxy.connections}; xl list unchanged; free memory at baseline")
            pvhvd_client.stop_and_check(s.daemon, hv)
            s.daemon = None
            print(f"ok: {hv.name}: pvhvd kept its domains across the relay link's drops")
        finally:
            if proxy:
                proxy.stop()
            s.cleanup()


if __name__ == "__main__":
    main()
