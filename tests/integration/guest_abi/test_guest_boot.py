"""The reference guest kernel boots as dom0 (on ours and on real Xen 4.17) and runs /init.

Checks the whole start-of-day path: ELF notes and the dom0 build, traps and callbacks, the
timer (VIRQ_TIMER + set_timer_op + SCHEDOP_block), the direct map built with mmu_update, the
user address space (separate user L4) and the musl init's system calls, then the shutdown.
"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import guest_boot  # noqa: E402
import machine  # noqa: E402

def main():
    build, hv = guest_boot.arguments()
    result = guest_boot.boot_guest(build, hv, "", hv.poweroff)
    guest_boot.expect_ended(result, hv, hv.poweroff, 0)
    for line in ("pv: page-table updates by hypercall", "timer: ok (",
                 "hello from init (pid 1)", "init: heap ok", "init exited: status 0"):
        machine.expect(line in result.serial, f"missing '{line}'", result)
    machine.expect("kernel panic" not in result.serial, "kernel panicked", result)
    print(f"ok: guest kernel ran init on {hv.name} ({result.seconds:.1f} s)")


if __name__ == "__main__":
    main()
