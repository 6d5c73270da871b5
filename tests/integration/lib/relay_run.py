"""Boots dom0 as the relay (`relay=com2`, tools/PROTOCOL.md) with COM2 on a Unix socket (QEMU's
`-chardev socket,server=on,wait=off` + `-serial chardev:`), and runs a host-side client against
it while the machine runs. The machine has its own hard timeout (machine.boot); a client that
hangs fails by its own timeouts, and the socket closes when QEMU is killed."""
import os
import subprocess
import tempfile
import threading
import time

import guest_boot
import machine
import relay_client

SERVING = "relay: serving"


def boot_relay(build, hv, kernel_args, client, hypervisor_args="", timeout=90, memory="512M", window=False,
               qemu_extra=()):
    """Boots `hv` with dom0 = the reference kernel with `kernel_args` (relay=com2 ...); once the
    relay says it is serving, calls client(socket_path, serial_so_far) in this thread. Returns
    (boot result, what client returned). The client must end dom0 (SHUTDOWN) for the machine to end.
    window: the machine also gets the relay's bulk window (tools/PROTOCOL.md), a file in the
    same directory; the client is called as client(socket_path, serial_so_far, window_path).
    qemu_extra: more QEMU arguments (make bench: -icount shift=0)."""
    kernel = os.path.join(build, "guest", "kernel")
    initrd = os.path.join(build, "guest", "initrd.cpio")
    with tempfile.TemporaryDirectory(prefix="relay") as tmp:
        socket_path = os.path.join(tmp, "com2.sock")
        extra = tuple(machine.relay_serial(socket_path))
        window_path = os.path.join(tmp, "window")
        if window:
            machine.make_window_file(window_path, relay_client.WINDOW_BYTES)
            extra += relay_client.window_qemu_args(window_path)
        extra += tuple(qemu_extra)
        serial = {"text": ""}
        serving = threading.Event()
        abort = threading.Event()  # the client failed: end the machine now, not at its timeout

        def watch(text):
            serial["text"] = text
            if SERVING in text:
                serving.set()
            return abort.is_set()

        append = f"{hv.append} {hypervisor_args}".strip()
        outcome = {}

        def run_machine():
            outcome["boot"] = machine.boot(hv.image, append, [(kernel, kernel_args), (initrd, "")], timeout=timeout,
                                           until=None if hv.ends_itself else hv.poweroff, memory=memory,
                                           extra=extra, watch=watch)
            serving.set()  # unblocks a client still waiting for a machine that ended

        thread = threading.Thread(target=run_machine, daemon=True)
        thread.start()
        serving.wait(timeout)
        result = None
        error = None
        if "boot" not in outcome and SERVING in serial["text"]:
            try:
                result = (client(socket_path, serial["text"], window_path) if window
                          else client(socket_path, serial["text"]))
            except BaseException as e:  # SystemExit from machine.expect too; reported below
                error = e
                abort.set()
        thread.join(timeout + 30)
        boot = outcome.get("boot")
        machine.expect(boot is not None, "the machine did not end")
        machine.expect(SERVING in boot.serial, f"{hv.name}: the relay did not start", boot)
        if error is not None:
            print("---- serial console ----")
            print(boot.serial)
            print("------------------------")
            raise error
        return boot, result


def run_program(build, socket_path, args, timeout=60, trace_path=None, window_path=None):
    """Runs a host program with PVHV_XENCTRL pointing at the relay (and PVHV_XENCTRL_WINDOW at its
    bulk window, when given); returns the CompletedProcess."""
    env = dict(os.environ, PVHV_XENCTRL=f"relay:{socket_path}", PVHV_XENCTRL_TIMEOUT_MS="20000")
    env.pop("PVHV_XENCTRL_WINDOW", None)
    if window_path:
        env["PVHV_XENCTRL_WINDOW"] = window_path
    if trace_path:
        env["PVHV_XENCTRL_TRACE"] = trace_path
    return subprocess.run(args, env=env, capture_output=True, text=True, timeout=timeout)


def program(build, name):
    path = os.path.join(build, "bin", name)
    machine.expect(os.path.exists(path), f"missing {path} (build first)")
    return path
