"""NMIs at arbitrary points (issue 8, item 10): they arrive on a stack of their own (IST), are
reported and ignored, and never reach a guest as an exception or disturb what they interrupted.

QEMU's QMP `inject-nmi` raises NMIs while dom0 runs the fork test (some land in the guest,
some in the hypervisor, the syscall entry's first instructions included when they are lucky):
the machine must end by itself with dom0's poweroff and a clean audit, having reported them.
"""
import json
import os
import socket
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import guest_boot  # noqa: E402
import machine  # noqa: E402

NMIS = 12


class NmiInjector:
    """Injects NMIs through QEMU's QMP socket, one per call once dom0's fork test runs (the
    firmware before the hypervisor must not get any)."""

    def __init__(self, path):
        self.path = path
        self.stream = None
        self.sent = 0

    def __call__(self, serial):
        if self.sent >= NMIS or "forktest: " not in serial:
            return
        try:
            if self.stream is None:
                self.socket = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
                self.socket.connect(self.path)
                self.stream = self.socket.makefile("rw")
                self.stream.readline()  # greeting
                self.command("qmp_capabilities")
            if "return" in self.command("inject-nmi"):
                self.sent += 1
        except (OSError, ValueError):
            self.sent = NMIS  # the machine ended

    def command(self, name):
        self.stream.write(json.dumps({"execute": name}) + "\n")
        self.stream.flush()
        return json.loads(self.stream.readline())


def main():
    build, hv = guest_boot.arguments()
    kernel = os.path.join(build, "guest", "kernel")
    initrd = os.path.join(build, "guest", "initrd.cpio")
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "qmp.sock")
        injector = NmiInjector(path)
        result = machine.boot(hv.image, hv.append, [(kernel, "init=/forktest"), (initrd, "")], timeout=240,
                              extra=("-qmp", f"unix:{path},server=on,wait=off"), watch=injector)
    guest_boot.expect_ended(result, hv, hv.poweroff, 0)
    reported = result.serial.count("NMI received at ")
    machine.expect(injector.sent > 0, "no NMI could be injected", result)
    machine.expect(reported > 0, "no NMI was reported", result)
    machine.expect("forktest: passed" in result.lines(), "the fork test did not pass", result)
    machine.expect("unhandled exception 2" not in result.serial, "an NMI went to the guest", result)
    print(f"ok: {injector.sent} NMIs injected, {reported} reported and ignored, dom0 ran to its end "
          f"({result.seconds:.1f} s)")


if __name__ == "__main__":
    main()
