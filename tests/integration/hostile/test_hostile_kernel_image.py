"""A kernel image is input like any other: every value it supplies (Xen ELF notes, segment
sizes) is checked against the start-of-day layout before the builder uses it, so an image
either boots or is refused with a message, as dom0 (the boot fails with exit value 0x7f) and
as a domU (refused, dom0 runs on), and the hypervisor never faults.

The images are the reference guest kernel with notes changed by the test (kernel_image.py):
 - INIT_P2M = 0x8000000000 (what Debian's Linux 6.1 gives; the builder used to write the p2m
   list there as if it were in the start-of-day region and page-faulted) and MOD_START_PFN:
   both only say what a kernel can cope with, and are ignored (docs/architecture.md): the
   kernel boots with the classic layout, and the hypervisor says so;
 - a VIRT_BASE in the non-canonical hole or in the hypervisor's area, an INIT_P2M inside the
   image, a HYPERCALL_PAGE or ENTRY outside it, a segment too large for any domain: refused,
   each with its reason.
Real Xen 4.17 honours INIT_P2M and MOD_START_PFN (a layout our guest does not implement) and
builds no domU at boot, so this runs on ours only.
"""
import os
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import guest_boot  # noqa: E402
import kernel_image as k  # noqa: E402
import machine  # noqa: E402

BOOT_FAILURE = 0x7f
NON_CANONICAL = 0x0000800000000000
HYPERVISOR_AREA = 0xffff800000000000


def moved_to(base):
    """Notes that move the whole image to `base` (its segments' physical addresses start at 0)."""
    return {k.VIRT_BASE: k.u64(base), k.ENTRY: k.u64(base), k.HYPERCALL_PAGE: k.u64(base + 0x1000)}


def bootable(original):
    return [
        ("INIT_P2M at 0x8000000000", k.variant(original, {k.INIT_P2M: k.u64(0x8000000000)}),
         "INIT_P2M 8000000000 ignored: the p2m list is at "),
        ("MOD_START_PFN", k.variant(original, {k.MOD_START_PFN: k.u64(1)}), "MOD_START_PFN ignored"),
    ]


def refused(original):
    base = k.note_value(original, k.VIRT_BASE)
    return [
        ("VIRT_BASE in the non-canonical hole", k.variant(original, moved_to(NON_CANONICAL)),
         "start-of-day layout leaves the canonical address space"),
        ("VIRT_BASE in the hypervisor's area", k.variant(original, moved_to(HYPERVISOR_AREA)),
         "kernel image overlaps the hypervisor area"),
        ("INIT_P2M inside the image", k.variant(original, {k.INIT_P2M: k.u64(base + 0x2000)}),
         "INIT_P2M base inside the kernel image"),
        ("HYPERCALL_PAGE outside the image", k.variant(original, {k.HYPERCALL_PAGE: k.u64(0x1000)}),
         "hypercall page outside the kernel image"),
        ("ENTRY outside the image", k.variant(original, {k.ENTRY: k.u64(base - 0x1000)}),
         "entry point outside the kernel image"),
        ("a 1 GiB segment", k.variant(original, memsz={1: 1 << 30}),
         "domain memory is too small for the kernel image"),
    ]


def no_hypervisor_fault(result, name):
    machine.expect(not result.timed_out, f"{name}: machine hung", result)
    machine.expect("hypervisor fault" not in result.serial and "Panic" not in result.serial,
                   f"{name}: the hypervisor faulted", result)


def boot_dom0(build, hv, path, hypervisor_args=""):
    initrd = os.path.join(build, "guest", "initrd.cpio")
    return machine.boot(hv.image, f"{hv.append} {hypervisor_args}".strip(), [(path, ""), (initrd, "")],
                        timeout=120, memory="512M")


def boot_domu(build, hv, path):
    kernel = os.path.join(build, "guest", "kernel")
    initrd = os.path.join(build, "guest", "initrd.cpio")
    return machine.boot(hv.image, "loglvl=info dom0_mem=64M domU_mem=64M",
                        [(kernel, ""), (initrd, ""), (path, ""), (initrd, "")], timeout=180, memory="512M")


def check_boots_as_dom0(build, hv, name, path, said, ptwr):
    result = boot_dom0(build, hv, path, f"ptwr={ptwr}")
    no_hypervisor_fault(result, name)
    guest_boot.expect_ended(result, hv, hv.poweroff, 0)
    machine.expect(f"d0: {said}" in result.serial, f"{name}: missing 'd0: {said}'", result)
    machine.expect("init exited: status 0" in result.lines(), f"{name}: dom0 did not run to its end", result)
    print(f"ok: dom0 with {name} (ptwr={ptwr}) boots and ends ({result.seconds:.1f} s)")


def check_boots_as_domu(build, hv, name, path, said):
    result = boot_domu(build, hv, path)
    no_hypervisor_fault(result, name)
    guest_boot.expect_ended(result, hv, hv.poweroff, 0)
    machine.expect("Domain 1 shut down: reason poweroff" in result.serial, f"{name}: the domU did not end", result)
    machine.expect("(d1) init exited: status 0" in result.lines(), f"{name}: the domU did not run to its end",
                   result)
    machine.expect(f"d1: {said}" in result.serial, f"{name}: missing 'd1: {said}'", result)
    print(f"ok: a domU with {name} boots and ends beside dom0 ({result.seconds:.1f} s)")


def check_refused_as_dom0(build, hv, name, path, reason):
    result = boot_dom0(build, hv, path)
    no_hypervisor_fault(result, name)
    machine.expect(f"dom0 kernel refused: {reason}" in result.serial, f"{name}: expected '{reason}'", result)
    machine.expect("Boot failed: no usable dom0 kernel" in result.serial, f"{name}: no boot-failure line", result)
    machine.expect(result.debug_exit_value() == BOOT_FAILURE,
                   f"{name}: exit value {result.debug_exit_value()}, expected {BOOT_FAILURE}", result)
    print(f"ok: dom0 with {name}: refused ({reason})")


def check_refused_as_domu(build, hv, name, path, reason):
    result = boot_domu(build, hv, path)
    no_hypervisor_fault(result, name)
    guest_boot.expect_ended(result, hv, hv.poweroff, 0)
    machine.expect(f"d1 kernel refused: {reason}" in result.serial, f"{name}: expected '{reason}'", result)
    machine.expect("Domain 1" not in result.serial, f"{name}: a domain 1 ran", result)
    machine.expect("init exited: status 0" in result.lines(), f"{name}: dom0 did not run to its end", result)
    print(f"ok: a domU with {name}: refused ({reason}), dom0 ran on ({result.seconds:.1f} s)")


def main():
    build, hv = guest_boot.arguments()
    machine.expect(hv.name == "ours", "this test runs on ours only")
    with open(os.path.join(build, "guest", "kernel"), "rb") as f:
        original = f.read()
    with tempfile.TemporaryDirectory() as tmp:
        def saved(name, image):
            path = os.path.join(tmp, name.replace(" ", "_").replace("'", ""))
            with open(path, "wb") as f:
                f.write(image)
            return path

        cases = bootable(original)
        for name, image, said in cases:
            for ptwr in ("emulate", "writable"):
                check_boots_as_dom0(build, hv, name, saved(name, image), said, ptwr)
        both = k.variant(original, {k.INIT_P2M: k.u64(0x8000000000), k.MOD_START_PFN: k.u64(1)})
        check_boots_as_domu(build, hv, "INIT_P2M and MOD_START_PFN", saved("both", both), "INIT_P2M 8000000000 ignored")

        for i, (name, image, reason) in enumerate(refused(original)):
            path = saved(name, image)
            check_refused_as_dom0(build, hv, name, path, reason)
            if i < 3:
                check_refused_as_domu(build, hv, name, path, reason)


if __name__ == "__main__":
    main()
