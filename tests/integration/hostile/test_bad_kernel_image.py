"""A corrupt or non-Xen dom0 kernel is refused with a clear boot message and a clean machine
exit (isa-debug-exit value 0x7f), never a triple fault or a hang."""
import argparse
import os
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import machine  # noqa: E402

BOOT_FAILURE = 0x7f


def check(build, name, image_bytes, expected_reason):
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, name)
        with open(path, "wb") as f:
            f.write(image_bytes)
        boot = machine.boot(machine.ours(build), "loglvl=all dom0_mem=32M", [(path, "console=hvc0")],
                            timeout=60)
    machine.expect(not boot.timed_out, f"{name}: machine hung", boot)
    machine.expect(f"dom0 kernel refused: {expected_reason}" in boot.serial,
                   f"{name}: expected refusal '{expected_reason}'", boot)
    machine.expect("Boot failed: no usable dom0 kernel" in boot.serial, f"{name}: no boot-failure line", boot)
    machine.expect(boot.debug_exit_value() == BOOT_FAILURE,
                   f"{name}: exit value {boot.debug_exit_value()} (status {boot.exit_status}), expected {BOOT_FAILURE}",
                   boot)
    print(f"ok: {name}: refused ({expected_reason})")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--build", default=None)
    build = machine.build_dir(parser.parse_args().build)
    with open(machine.ours(build), "rb") as f:
        elf_without_xen_notes = f.read()   # a valid x86-64 ELF executable, but not a PV kernel
    check(build, "garbage", b"this is not a kernel image\n" * 40, "not an ELF file")
    check(build, "truncated", elf_without_xen_notes[:40], "ELF header truncated")
    check(build, "elf32", b"\x7fELF\x01\x01\x01" + bytes(200), "not a 64-bit x86-64 ELF")
    check(build, "no-xen-notes", elf_without_xen_notes, "not a Xen PV kernel (no Xen ELF notes)")
    corrupt = bytearray(elf_without_xen_notes)
    corrupt[0x20:0x28] = (0xfffffff0).to_bytes(8, "little")  # e_phoff far beyond the file
    check(build, "program-headers-out-of-bounds", bytes(corrupt), "program header out of bounds")


if __name__ == "__main__":
    main()
