"""Conformance: the reference guest kernel boots as dom0 on real Xen 4.17 and runs /init.

Checks the whole start-of-day path: ELF notes and the dom0 build, traps and callbacks, the
timer (VIRQ_TIMER + set_timer_op + SCHEDOP_block), the direct map built with mmu_update, the
user address space (separate user L4) and the musl init's system calls, then the shutdown.
"""
import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import machine  # noqa: E402

XEN_APPEND = "console=com1 com1=115200,8n1 dom0_mem=128M loglvl=all guest_loglvl=all"
POWEROFF = "Dom0 halted"  # Xen 4.17: "Hardware Dom0 halted: halting machine"


def boot_guest(build, cmdline, until, timeout=180):
    kernel = os.path.join(build, "guest", "kernel")
    initrd = os.path.join(build, "guest", "initrd.cpio")
    xen = machine.xen417(build)
    for path in (kernel, initrd, xen):
        machine.expect(os.path.exists(path), f"missing {path} (build first)")
    return machine.boot(xen, XEN_APPEND, [(kernel, cmdline), (initrd, "")], timeout=timeout,
                        until=until, memory="512M")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--build", default=None)
    build = machine.build_dir(parser.parse_args().build)

    result = boot_guest(build, "", POWEROFF)
    machine.expect(not result.timed_out, "boot timed out", result)
    for line in ("pv: page-table updates by hypercall", "timer: ok (",
                 "hello from init (pid 1)", "init: heap ok", "init exited: status 0"):
        machine.expect(line in result.serial, f"missing '{line}'", result)
    machine.expect(POWEROFF in result.serial, "Xen did not report a dom0 poweroff", result)
    machine.expect("kernel panic" not in result.serial, "kernel panicked", result)
    print(f"ok: guest kernel ran init on Xen 4.17 ({result.seconds:.1f} s)")


if __name__ == "__main__":
    main()
