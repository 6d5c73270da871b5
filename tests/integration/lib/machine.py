"""Boots a multiboot hypervisor (ours or Xen 4.17) under QEMU TCG and collects what it says.

Every boot has a hard timeout: a hung machine is killed and reported as such, never waited on.
Our hypervisor ends the machine through isa-debug-exit (exit status (v << 1) | 1); Xen cannot,
so a boot may also end when an expected line appears on the serial console (`until`).
"""
import os
import subprocess
import tempfile
import time
from dataclasses import dataclass

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))


@dataclass
class Boot:
    serial: str          # everything printed on COM1
    exit_status: int     # QEMU's exit status (None if killed)
    timed_out: bool      # killed by the timeout
    seconds: float

    def lines(self):
        return self.serial.splitlines()

    def debug_exit_value(self):
        """The value written to isa-debug-exit, or None if QEMU ended otherwise."""
        if self.exit_status is None or self.exit_status % 2 == 0:
            return None
        return self.exit_status >> 1


def build_dir(args_build=None):
    return args_build or os.path.join(ROOT, "build")


def ours(build):
    return os.path.join(build, "xen", "xen")


def xen417(build):
    return os.path.join(build, "deps", "xen-4.17", "xen")


def qemu_command(hypervisor, append, modules, memory="512M", extra=(), serial="serial.log", smp=1, accel="tcg"):
    """The one QEMU command line of the project's boots: no display, VGA or NIC (so SeaBIOS
    never writes to COM1), the serial port to a file, isa-debug-exit for the exit value.
    smp: how many CPUs (`-smp N`); 1, the default, adds nothing, so single-CPU boots keep their
    exact command line. Under `-icount` QEMU runs all CPUs round robin on one thread, so such
    runs stay deterministic. accel: QEMU's -accel value ("tcg,thread=multi": each CPU on a host
    thread of its own, so they really run at once; not with -icount)."""
    # QEMU separates modules with commas; a comma inside a command line is written twice.
    initrd = ",".join(f"{p} {a}".strip().replace(",", ",,") for p, a in modules)
    return ["qemu-system-x86_64", "-accel", accel, "-cpu", "Westmere", "-m", memory,
            "-display", "none", "-vga", "none", "-nic", "none", "-monitor", "none",
            "-serial", f"file:{serial}", "-no-reboot",
            "-device", "isa-debug-exit,iobase=0xf4,iosize=4",
            "-kernel", hypervisor, "-append", append, "-initrd", initrd,
            *(["-smp", str(smp)] if smp != 1 else []), *extra]


def boot(hypervisor, append, modules, timeout=120, until=None, memory="512M", extra=(), watch=None, smp=1,
         accel="tcg"):
    """modules: list of (path, command line). until: a string that ends the boot when seen.
    smp, accel: the machine's CPU count and accelerator (qemu_command).
    watch: called with the serial output so far while the machine runs (about every 0.1 s),
    for tests that act on the running machine; returning True ends the machine there."""
    with tempfile.TemporaryDirectory() as tmp:
        log = os.path.join(tmp, "serial.log")
        cmd = qemu_command(hypervisor, append, modules, memory, extra, log, smp, accel)
        start = time.monotonic()
        proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                stderr=subprocess.PIPE)
        timed_out = False
        status = None
        while True:
            status = proc.poll()
            if status is not None:
                break
            stop = bool(watch and os.path.exists(log) and watch(_read(log)))
            if stop or (until and os.path.exists(log) and until in _read(log)):
                time.sleep(0.2)
                proc.kill()
                proc.wait()
                status = None
                break
            if time.monotonic() - start > timeout:
                timed_out = True
                proc.kill()
                proc.wait()
                status = None
                break
            time.sleep(0.1)
        err = proc.stderr.read().decode(errors="replace")
        text = _read(log) if os.path.exists(log) else ""
        if err.strip():
            text += "\n[qemu stderr] " + err
        return Boot(text, status, timed_out, time.monotonic() - start)


def _read(path):
    with open(path, "rb") as f:
        return f.read().decode(errors="replace")


def expect(condition, message, boot_result=None):
    if not condition:
        if boot_result is not None:
            print("---- serial console ----")
            print(boot_result.serial)
            print("------------------------")
        raise SystemExit(f"FAIL: {message}")


def relay_serial(socket_path):
    """QEMU's arguments for dom0's COM2 as a Unix socket the relay's client connects to."""
    return ("-chardev", f"socket,id=relay,path={socket_path},server=on,wait=off", "-serial", "chardev:relay")


def make_window_file(path, size):
    """The relay's window file, `size` zero bytes, 0600 whatever the umask (and if it was there
    with another mode): whoever maps it drives dom0's relay, so only the daemon's user may."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        os.fchmod(fd, 0o600)
        os.ftruncate(fd, size)
    finally:
        os.close(fd)


def relay_machine_command(build, hypervisor_name, relay_socket, serial, hypervisor_args="", memory="512M",
                          window=None, smp=1):
    """The relay machine (dom0 = the reference kernel with relay=com2, COM2 on `relay_socket`) as
    one argv: what relay_run.boot_relay boots, for a program that starts it itself (pvhvd).
    `window`: a file made here for the relay's bulk window (tools/PROTOCOL.md), given to QEMU."""
    import guest_boot  # here, not at the top: guest_boot imports this module
    import relay_client
    hv = guest_boot.hypervisor(build, hypervisor_name)
    kernel = os.path.join(build, "guest", "kernel")
    initrd = os.path.join(build, "guest", "initrd.cpio")
    append = f"{hv.append} {hypervisor_args}".strip()
    extra = relay_serial(relay_socket)
    if window:
        make_window_file(window, relay_client.WINDOW_BYTES)
        extra += relay_client.window_qemu_args(window)
    return qemu_command(hv.image, append, [(kernel, "relay=com2"), (initrd, "")], memory, extra, serial, smp)


if __name__ == "__main__":
    # `machine.py --print-command ...`: the relay machine's argv as one JSON array, so the daemon
    # (tools/daemon) starts the same machine the tests boot, from this one definition.
    import argparse
    import json
    import sys
    parser = argparse.ArgumentParser()
    parser.add_argument("--print-command", action="store_true", required=True)
    parser.add_argument("--build", required=True)
    parser.add_argument("--hypervisor", default="ours", choices=["ours", "xen417"])
    parser.add_argument("--relay-socket", required=True)
    parser.add_argument("--serial", required=True)
    parser.add_argument("--hypervisor-args", default="")
    parser.add_argument("--memory", default="512M")
    parser.add_argument("--window", default=None)
    parser.add_argument("--smp", type=int, default=1, help="the machine's CPU count (-smp N)")
    args = parser.parse_args()
    command = relay_machine_command(args.build, args.hypervisor, args.relay_socket, args.serial,
                                    args.hypervisor_args, args.memory, args.window, args.smp)
    # PVHV_QEMU_EXTRA: more QEMU arguments for the daemon's machine (make bench: "-icount shift=0").
    import shlex
    command += shlex.split(os.environ.get("PVHV_QEMU_EXTRA", ""))
    json.dump(command, sys.stdout)
    sys.stdout.write("\n")
