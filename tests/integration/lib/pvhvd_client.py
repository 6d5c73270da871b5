"""A Python client of pvhvd's socket (tools/PROTOCOL.md, "The daemon's client protocol"), and
helpers that run the daemon for a test: `Daemon` (one state directory, restarted in place after a
`kill -9`) and `TestDaemon`, a `with` block that gives a test a fresh temporary state directory
with the forktest initrd beside it, and stops the daemon and kills its machine on the way out
whatever happened (the daemon's SIGTERM shuts dom0 down and stops the machine)."""
import json
import os
import signal
import socket
import subprocess
import tempfile
import time

import machine
import xenctrl_domu


class Client:
    def __init__(self, state_dir, timeout=60):
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.settimeout(timeout)
        self.sock.connect(os.path.join(state_dir, "pvhvd.sock"))
        self.buffer = b""
        self.next_id = 1

    def send_line(self, data):
        self.sock.sendall(data if data.endswith(b"\n") else data + b"\n")

    def read_answer(self):
        while b"\n" not in self.buffer:
            chunk = self.sock.recv(65536)
            if not chunk:
                raise ConnectionError("pvhvd closed the connection")
            self.buffer += chunk
        line, self.buffer = self.buffer.split(b"\n", 1)
        return json.loads(line)

    def call(self, op, **fields):
        request = {"id": self.next_id, "op": op, **fields}
        self.next_id += 1
        self.send_line(json.dumps(request).encode())
        answer = self.read_answer()
        machine.expect(answer.get("id") == request["id"], f"answer {answer} to request {request['id']}")
        return answer

    def ok(self, op, **fields):
        answer = self.call(op, **fields)
        machine.expect(answer.get("ok") is True, f"{op} {fields}: {answer}")
        return answer

    def close(self):
        self.sock.close()


class Daemon:
    """pvhvd on `state_dir`; `args` as its command line ("--attach", ...)."""

    def __init__(self, build, state_dir, args=(), timeout=240):
        self.build = build
        self.state_dir = state_dir
        self.log_path = os.path.join(state_dir, "pvhvd.log")
        os.makedirs(state_dir, mode=0o700, exist_ok=True)  # pvhvd refuses one others may reach
        self.log = open(self.log_path, "ab")
        self.start(args, timeout)

    def start(self, args, timeout):
        binary = os.path.join(self.build, "bin", "pvhvd")
        machine.expect(os.path.exists(binary), f"missing {binary} (build first)")
        self.proc = subprocess.Popen([binary, "--state-dir", self.state_dir, "--build", self.build, *args],
                                     stdin=subprocess.DEVNULL, stdout=self.log, stderr=subprocess.STDOUT)
        self.wait_serving(timeout)

    def restart_attached(self, timeout=240):
        """After `kill9`: a new daemon on the same state directory, attached to the running machine
        through its relay socket, as an administrator restarts it."""
        self.start(["--attach", os.path.join(self.state_dir, "com2.sock")], timeout)

    def wait_serving(self, timeout):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                machine.expect(False, f"pvhvd exited with {self.proc.returncode}:\n{self.text()}")
            try:
                client = Client(self.state_dir, timeout=10)
                client.ok("hello", version=1)
                client.close()
                return
            except (OSError, ConnectionError):
                time.sleep(0.5)
        machine.expect(False, f"pvhvd did not serve within {timeout} s:\n{self.text()}")

    def text(self):
        with open(self.log_path, "rb") as f:
            return f.read().decode(errors="replace")

    def serial(self):
        path = os.path.join(self.state_dir, "serial.log")
        if not os.path.exists(path):
            return ""
        with open(path, "rb") as f:
            return f.read().decode(errors="replace")

    def client(self, timeout=60):
        return Client(self.state_dir, timeout)

    def kill9(self):
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait()

    def stop(self, timeout=90):
        """SIGTERM: dom0 shuts down, the machine stops. Returns the daemon's exit status."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
                return None
        return self.proc.returncode

    def kill_machine(self):
        """Whatever is left (a failed test): the QEMU machine.json names is killed."""
        try:
            with open(os.path.join(self.state_dir, "machine.json")) as f:
                pid = json.load(f).get("qemu_pid", -1)
            if pid > 0:
                os.kill(pid, signal.SIGKILL)
        except (OSError, ValueError):
            pass


def xl_env(state):
    """The environment that points `xl` at the daemon of state directory `state`."""
    return dict(os.environ, PVHV_STATE_DIR=state)


def run_xl(build, env, *args, timeout=240):
    """`xl ARGS` (build/bin/xl) in `env` (xl_env), run from the repository's root: the finished process."""
    return subprocess.run([os.path.join(build, "bin", "xl"), *args], cwd=machine.ROOT, env=env,
                          capture_output=True, text=True, timeout=timeout)


class TestDaemon:
    """`with TestDaemon(build, args) as run:` a daemon (`run.daemon`) on a fresh state directory
    (`run.state`) in a temporary folder (`run.tmp`), with the forktest initrd built there
    (`run.initrd`; `run.kernel` is the guest kernel). Leaving the block stops the daemon and kills
    its machine, whatever happened inside; a test that checks the daemon's exit does so first
    (`stop_and_check`)."""

    def __init__(self, build, args=(), prefix="pvhvd"):
        self.build, self.args, self.prefix = build, list(args), prefix
        self.kernel = os.path.join(build, "guest", "kernel")

    def __enter__(self):
        self.folder = tempfile.TemporaryDirectory(prefix=self.prefix)
        self.tmp = self.folder.name
        self.state = os.path.join(self.tmp, "state")
        self.initrd = os.path.join(self.tmp, "forktest.cpio")
        try:
            xenctrl_domu.forktest_initrd(self.build, self.initrd)
            self.daemon = Daemon(self.build, self.state, self.args)
        except BaseException:
            self.folder.cleanup()
            raise
        self.env = xl_env(self.state)
        return self

    def xl(self, *args, timeout=240):
        return run_xl(self.build, self.env, *args, timeout=timeout)

    def xl_ok(self, *args, timeout=240):
        """`xl ARGS`'s output; a failing status fails the test with the daemon's log."""
        run = self.xl(*args, timeout=timeout)
        machine.expect(run.returncode == 0, f"xl {' '.join(args)}: status {run.returncode}\n{run.stdout}{run.stderr}\n"
                       f"{self.daemon.text()[-3000:]}")
        return run.stdout

    def __exit__(self, *exc):
        try:
            self.daemon.stop(timeout=30)
            self.daemon.kill_machine()
        finally:
            self.folder.cleanup()
        return False


def wait_for(what, condition, timeout, daemon, step=0.5):
    """condition()'s first true value within `timeout` s, else the test fails with the daemon's log
    and the machine's serial tail."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = condition()
        if value:
            return value
        time.sleep(step)
    machine.expect(False, f"{what} within {timeout} s\n--- pvhvd ---\n{daemon.text()}\n--- serial ---\n{daemon.serial()[-3000:]}")


def domain_names(daemon):
    """The names of the domains the daemon's `list` shows."""
    client = daemon.client()
    try:
        return [d["name"] for d in client.ok("list")["domains"]]
    finally:
        client.close()


def wait_gone(daemon, name, timeout=300):
    """Until the daemon's `list` no longer shows `name`; else the test fails with its log."""
    deadline = time.monotonic() + timeout
    while name in domain_names(daemon):
        machine.expect(time.monotonic() < deadline, f"{name} did not end:\n{daemon.text()}")
        time.sleep(0.5)


def settle(read, baseline, timeout=60, step=0.5):
    """read()'s value once it is back at `baseline` (a destroyed domain's frames come back a
    little after its destruction, as the hypervisor scrubs them), or what it is after `timeout` s."""
    deadline = time.monotonic() + timeout
    now = read()
    while now != baseline and time.monotonic() < deadline:
        time.sleep(step)
        now = read()
    return now


def settle_free(client, baseline, timeout=60):
    """The machine's free pages (the daemon's `info`) once they are back at `baseline`."""
    return settle(lambda: client.ok("info")["free_pages"], baseline, timeout)


def stop_and_check(daemon, hv):
    """SIGTERM: the daemon exits 0 and the machine ends as `hv` ends (ours: a clean frame audit)."""
    status = daemon.stop()
    machine.expect(status == 0, f"pvhvd exit status {status}\n{daemon.text()}")
    serial = daemon.serial()
    if hv.ends_itself:
        machine.expect("audit: clean" in serial, f"frame audit not clean:\n{serial[-3000:]}")
        machine.expect("ending the machine (exit value 0)" in serial, f"the machine did not end:\n{serial[-2000:]}")
    else:
        machine.expect(hv.poweroff in serial, f"dom0 did not halt:\n{serial[-2000:]}")
