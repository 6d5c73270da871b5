"""As many boot-module domUs as the domain table holds (issue 9, scope item 1): dom0 and 31
domUs (the table's 32 slots, README), each built through createdomain's code, run to their end;
the loader's modules beyond the 64 kept are dropped with a message, not silently. Ours only:
Xen 4.17 builds no domU at boot.
"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import guest_boot  # noqa: E402
import machine  # noqa: E402

DOMAIN_SLOTS = 32  # xen/domain/domain.h, domains::max_domains


def main():
    build = machine.build_dir(sys.argv[2] if len(sys.argv) > 2 and sys.argv[1] == "--build" else None)
    hv = guest_boot.hypervisor(build, "ours")
    kernel = os.path.join(build, "guest", "kernel")
    initrd = os.path.join(build, "guest", "initrd.cpio")
    modules = [(kernel, ""), (initrd, "")]
    for _ in range(DOMAIN_SLOTS - 1):
        modules += [(kernel, "init=/hello"), (initrd, "")]
    modules += [(kernel, "init=/hello"), (initrd, "")]  # one pair too many: dropped
    result = machine.boot(hv.image, "loglvl=info dom0_mem=64M domU_mem=8M", modules, timeout=240, memory="512M")
    guest_boot.expect_ended(result, hv, "Domain 0 shut down: reason poweroff", 0)
    lines = result.lines()
    for domain in range(1, DOMAIN_SLOTS):
        machine.expect(f"Domain {domain} shut down: reason poweroff (0)" in result.serial,
                       f"domain {domain} did not run to its end", result)
        # A domU's line is printed whole when its newline comes, so it may follow a part of a
        # dom0 line still without its own (dom0's console_io is not line-buffered, as on Xen).
        machine.expect(any(line.endswith(f"(d{domain}) Hello world") for line in lines),
                       f"domain {domain} did not say hello", result)
    machine.expect("Boot: 2 modules beyond the first 64 dropped (the domain table has 32 slots)" in result.serial,
                   "the dropped modules were not reported", result)
    machine.expect(f"Domain {DOMAIN_SLOTS} " not in result.serial, "a domain beyond the table was built", result)
    print(f"ok: dom0 and {DOMAIN_SLOTS - 1} boot domUs ran, 2 modules dropped with a message ({result.seconds:.1f} s)")


if __name__ == "__main__":
    main()
