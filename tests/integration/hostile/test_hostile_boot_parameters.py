"""What the boot loader hands the hypervisor is checked like guest input: its command line
and the size of the modules.

1. Bad values of ptwr=, loglvl=, dom0_mem= and domU_mem= (and an unknown parameter) are each
   reported as a warning at the default log level, naming the parameter, the value given
   and what it takes (as Xen's 'parameter "x" has invalid value "y"'), and the option keeps
   its default: the machine boots as without them. dom0_mem=0 gives dom0 no memory: refused
   the same way (Xen takes it as unset), dom0 gets its default.
2. A 100 MiB initrd: the initrd module's frames are handed to the domain (as Xen hands them
   to dom0), so a machine needs its memory once: with -m 200M dom0 boots with it (the builder
   used to keep the module and copy it, and refused the boot as 'too small for the kernel
   image'). Where memory really is short (dom0_mem=64M, a 64 MiB domU) the refusal says the
   initrd does not fit and how much is needed; a domU of 160 MiB boots with it beside dom0.
"""
import os
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import guest_boot  # noqa: E402
import machine  # noqa: E402

BOOT_FAILURE = 0x7f
MiB = 1 << 20


def modules(build, initrd=None, domu_initrd=None):
    kernel = os.path.join(build, "guest", "kernel")
    shipped = os.path.join(build, "guest", "initrd.cpio")
    mods = [(kernel, ""), (initrd or shipped, "")]
    if domu_initrd:
        mods += [(kernel, ""), (domu_initrd, "")]
    return mods


def check_bad_parameters(build, hv):
    append = "ptwr=sometimes loglvl=loud dom0_mem=64Q domU_mem=1K noreboot dom0_mem=0 ptwr"
    result = machine.boot(hv.image, append, modules(build), timeout=120)
    guest_boot.expect_ended(result, hv, hv.poweroff, 0)
    expected = [
        'Warning: parameter "ptwr" has invalid value "sometimes" (expected emulate|writable|adaptive): ignored',
        'Warning: parameter "loglvl" has invalid value "loud" (expected none|error|warning|info|debug|all',
        'Warning: parameter "dom0_mem" has invalid value "64Q" (expected ',
        'Warning: parameter "domU_mem" has invalid value "1K" (expected a size of at least 4M',
        'Warning: parameter "noreboot" unknown: ignored',
        'Warning: parameter "dom0_mem" has invalid value "0" (expected ',
        'Warning: parameter "ptwr" needs a value (expected emulate|writable|adaptive): ignored',
    ]
    for line in expected:
        machine.expect(line in result.serial, f"missing warning: {line}", result)
    # The defaults held: PTE writes emulated, dom0 of 256 MiB (plus its 0.6 MiB initrd).
    machine.expect("256 MiB, entry" in result.serial and "guest PTE writes: emulate" in result.serial,
                   "an option lost its default", result)
    machine.expect("init exited: status 0" in result.lines(), "dom0 did not run to its end", result)
    print(f"ok: {len(expected)} bad parameters, each warned about with its value; defaults kept")

    result = machine.boot(hv.image, "loglvl=warning dom0_mem=64G", modules(build), timeout=120)
    guest_boot.expect_ended(result, hv, hv.poweroff, 0)
    machine.expect("Warning: dom0_mem=65536 MiB, but only " in result.serial,
                   "no warning for a dom0_mem beyond the machine", result)
    print("ok: dom0_mem beyond the machine's memory is warned about and clamped")


def check_big_initrd(build, hv, big):
    result = machine.boot(hv.image, "loglvl=info", modules(build, big), timeout=180, memory="200M")
    guest_boot.expect_ended(result, hv, hv.poweroff, 0)
    machine.expect("initrd module mfns " in result.serial, "the initrd module was not handed over", result)
    machine.expect("(104857600 bytes)" in result.serial, "dom0 did not see the 100 MiB initrd", result)
    machine.expect("init exited: status 0" in result.lines(), "dom0 did not run to its end", result)
    print(f"ok: a 100 MiB initrd boots on a 200 MiB machine ({result.seconds:.1f} s)")

    result = machine.boot(hv.image, "loglvl=info dom0_mem=64M", modules(build, big), timeout=120)
    machine.expect(not result.timed_out, "machine hung", result)
    machine.expect("d0: 64 MiB of memory, the kernel image and its initrd need 1" in result.serial,
                   "the refusal does not say how much is needed", result)
    machine.expect("dom0 kernel refused: domain memory is too small for the kernel image and its initrd"
                   in result.serial, "the refusal does not name the initrd", result)
    machine.expect(result.debug_exit_value() == BOOT_FAILURE, "the boot did not fail cleanly", result)
    print("ok: dom0_mem=64M with a 100 MiB initrd is refused for the initrd")

    for domu_mem, boots in (("64M", False), ("160M", True)):
        result = machine.boot(hv.image, f"loglvl=info dom0_mem=64M domU_mem={domu_mem}",
                              modules(build, None, big), timeout=180, memory="512M")
        guest_boot.expect_ended(result, hv, hv.poweroff, 0)
        machine.expect("init exited: status 0" in result.lines(), "dom0 did not run to its end", result)
        if boots:
            machine.expect("(d1) init exited: status 0" in result.lines(), "the domU did not boot", result)
        else:
            machine.expect("d1 kernel refused: domain memory is too small for the kernel image and its initrd"
                           in result.serial, "the domU refusal does not name the initrd", result)
        print(f"ok: a domU of {domu_mem} with a 100 MiB initrd {'boots' if boots else 'is refused'}, dom0 runs on")


def main():
    build, hv = guest_boot.arguments()
    machine.expect(hv.name == "ours", "this test runs on ours only")
    check_bad_parameters(build, hv)
    with tempfile.TemporaryDirectory() as tmp:
        big = os.path.join(tmp, "initrd-100M.cpio")
        # The shipped initrd, padded after its trailer to 100 MiB: the guest unpacks the same
        # files, and the module is 100 MiB long.
        with open(os.path.join(build, "guest", "initrd.cpio"), "rb") as f:
            shipped = f.read()
        with open(big, "wb") as f:
            f.write(shipped)
            f.truncate(100 * MiB)
        check_big_initrd(build, hv, big)


if __name__ == "__main__":
    main()
