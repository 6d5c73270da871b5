"""dom0 is a guest too: it never reaches the devices the hypervisor drives, through ports or
memory, and gets Xen 4.17's answers (the same assertions run on both hypervisors).

selftest=ioports (guest/selftest/cpu/selftest_ioports.cpp): with virtual IOPL, wide in/out whose
first port is free but whose last bytes fall on COM1 (0x3f8), the PIC (0x20) or our exit
device (0xf4), and a read reaching past port 0xffff. Every port of an access is checked
(Xen's admin_io_okay); a partly denied access is split, denied bytes read all ones and their
writes are dropped. The machine runs on and ends normally.

selftest=iomem (guest/selftest/memory/selftest_iomem.cpp): mmu_update and plain PTE stores mapping the
local APIC page or the MSI range are refused with -EPERM (Xen's dom0_setup_permissions);
the IO-APIC is read-only MMIO: a writable mapping is stored without RW.

On ours both run under ptwr=emulate and ptwr=writable (with direct PTE writes), with a clean
frame audit; and the port test also runs in a domU beside a working dom0 (a domU has no
I/O port permission: everything reads all ones).
"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import guest_boot  # noqa: E402
import machine  # noqa: E402


def check_selftest(result, name, prefix=""):
    """The selftest's checks (at least 8) passed, and the hypervisor never faulted."""
    checks = guest_boot.check_selftest(result, name, 8, prefix=prefix)
    machine.expect("hypervisor fault" not in result.serial, "the hypervisor faulted", result)
    return checks


def main():
    build, hv = guest_boot.arguments()
    modes = ("emulate", "writable") if hv.ends_itself else ("",)
    for name in ("ioports", "iomem"):
        for mode in modes:
            args = f"ptwr={mode}" if mode else ""
            result = guest_boot.boot_guest(build, hv, f"selftest={name} pte=direct", hv.poweroff, hypervisor_args=args)
            guest_boot.expect_ended(result, hv, hv.poweroff, 0)
            checks = check_selftest(result, name)
            machine.expect("init exited: status 0" in result.lines(), f"selftest={name}: init did not run", result)
            print(f"ok: selftest={name} {args} on {hv.name}, {checks} lines ({result.seconds:.1f} s)")

    if hv.ends_itself:  # domUs at boot are ours only
        kernel = os.path.join(build, "guest", "kernel")
        initrd = os.path.join(build, "guest", "initrd.cpio")
        result = machine.boot(hv.image, "loglvl=info dom0_mem=64M domU_mem=64M",
                              [(kernel, "init=/forktest"), (initrd, ""), (kernel, "selftest=ioports"), (initrd, "")],
                              timeout=240, memory="512M")
        guest_boot.expect_ended(result, hv, hv.poweroff, 0)
        check_selftest(result, "ioports", "(d1) ")
        machine.expect("Domain 1 shut down: reason poweroff" in result.serial, "the domU did not end", result)
        machine.expect("forktest: passed" in result.lines(), "dom0 did not finish its work", result)
        print(f"ok: selftest=ioports in a domU beside dom0 ({result.seconds:.1f} s)")


if __name__ == "__main__":
    main()
