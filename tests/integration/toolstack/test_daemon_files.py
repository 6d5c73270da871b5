"""The modes of what pvhvd's machine is driven through (issue 28), without QEMU: a state
directory another user could reach into is refused with one clear line and exit status 1,
before anything is made in it (no socket, no machine); the relay's window file is made 0600
whatever the umask, and made 0600 again if it was there with another mode (machine.py, which
pvhvd runs to get the machine's command line, makes it).

Takes --build (and ignores --hypervisor) like every integration test.
"""
import argparse
import json
import os
import stat
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(os.path.dirname(HERE)))
sys.path.insert(0, os.path.join(HERE, "..", "lib"))
import machine  # noqa: E402


def mode_of(path):
    return stat.S_IMODE(os.stat(path).st_mode)


def refused_state_dirs(build, tmp):
    binary = os.path.join(build, "bin", "pvhvd")
    machine.expect(os.path.exists(binary), f"missing {binary} (build first)")
    checked = 0
    for mode in (0o755, 0o750, 0o711, 0o707):
        state = os.path.join(tmp, f"state-{mode:o}")
        os.mkdir(state)
        os.chmod(state, mode)
        run = subprocess.run([binary, "--state-dir", state, "--build", build], capture_output=True, text=True,
                             timeout=60, stdin=subprocess.DEVNULL)
        lines = run.stderr.strip().splitlines()
        expected = f"pvhvd: state directory {state} is open to others (mode {mode:04o}): chmod 700 it"
        machine.expect(run.returncode == 1 and lines == [expected],
                       f"pvhvd on a {mode:04o} state directory: {run.returncode} {run.stderr!r}")
        machine.expect(os.listdir(state) == [] and mode_of(state) == mode,
                       f"the refused directory was used or changed: {os.listdir(state)} {mode_of(state):04o}")
        checked += 1
    return checked


def window_modes(build, tmp):
    window = os.path.join(tmp, "relay.window")
    command = [sys.executable, os.path.join(HERE, "..", "lib", "machine.py"), "--print-command", "--build", build,
               "--relay-socket", os.path.join(tmp, "com2.sock"), "--serial", os.path.join(tmp, "serial.log"),
               "--window", window]
    old = os.umask(0o022)
    try:
        for before in (None, 0o666):
            if before is not None:
                os.chmod(window, before)
            run = subprocess.run(command, capture_output=True, text=True, timeout=60)
            machine.expect(run.returncode == 0 and json.loads(run.stdout), f"machine.py --print-command: {run}")
            machine.expect(mode_of(window) == 0o600,
                           f"the window file is {mode_of(window):04o} (it was {before}), not 0600")
    finally:
        os.umask(old)
    size = os.path.getsize(window)
    machine.expect(size > 0, "the window file is empty")
    return size


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--build", default=os.path.join(REPO, "build"))
    parser.add_argument("--hypervisor", default="ours")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="pvhvd-files") as tmp:
        refused = refused_state_dirs(args.build, tmp)
        size = window_modes(args.build, tmp)
    print(f"ok: {refused} state directories open to others refused in one line; the window file "
          f"({size} bytes) is 0600 when made and when it was 0666")


if __name__ == "__main__":
    main()
