"""Runs tests/xenctrl/xc_domu_lifecycle (Debian's xenctrl.h, our libxenctrl and PV builder)
against a machine whose dom0 is the relay, to build and run a domU from the host: shared by
test_guest_xenctrl_domu.py (the lifecycle, hostile inputs, create/destroy cycles) and
test_guest_xenctrl_layout.py (the domU's start of day compared across hypervisors)."""
import os
import tempfile

import cpio_newc
import machine
import relay_run

# What /forktest needs in the domU's initrd: itself (also as /bin/forktest, which it execs), /hello
# and /bin/sh. The shipped initrd holds every program; the relay copies each byte of the initrd
# into the domU at a few tens of KB/s, so the domU gets just these.
FORKTEST_FILES = {"forktest", "hello", "bin", "bin/forktest", "bin/sh", "bin/hello"}


def forktest_initrd(build, path):
    with open(os.path.join(build, "guest", "initrd.cpio"), "rb") as f:
        members = [m for m in cpio_newc.read_members(f.read()) if m[0] in FORKTEST_FILES]
    machine.expect({m[0] for m in members} == FORKTEST_FILES, f"initrd lacks {FORKTEST_FILES - {m[0] for m in members}}")
    with open(path, "wb") as f:
        f.write(cpio_newc.write(members))


def run(build, hv, program_args, timeout=330):
    """Boots `hv` with the relay dom0, runs xc_domu_lifecycle with the forktest initrd and
    `program_args`, then dom0 shuts down. Returns (boot result, CompletedProcess)."""
    program = relay_run.program(build, "xc_domu_lifecycle")
    kernel = os.path.join(build, "guest", "kernel")
    with tempfile.TemporaryDirectory(prefix="domu") as tmp:
        initrd = os.path.join(tmp, "forktest.cpio")
        forktest_initrd(build, initrd)

        def client(socket_path, serial, window_path):
            args = [program, "--kernel", kernel, "--ramdisk", initrd, "--cmdline", "init=/forktest",
                    "--shutdown"] + program_args
            return relay_run.run_program(build, socket_path, args, timeout=timeout - 30, window_path=window_path)

        # The library talks through the relay's bulk window (tools/PROTOCOL.md): the serial link
        # carries 10-40 KB/s host to dom0, which made one domU build take minutes.
        return relay_run.boot_relay(build, hv, "relay=com2", client, timeout=timeout, window=True)


def layout_lines(stdout):
    return [line for line in stdout.splitlines() if line.startswith("xc_domu: layout: ")]
