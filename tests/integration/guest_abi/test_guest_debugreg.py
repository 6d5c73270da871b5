"""selftest=debugreg (guest/kernel/selftest_debugreg.cpp): HYPERVISOR_set_debugreg and
get_debugreg as Xen 4.17 answers them: reset values, guest addresses only in DR0-3, DR6 / DR7
reserved bits, general detect and I/O breakpoints refused, DR4 / DR5 aliases, -ENODEV beyond;
then the same registers through `mov` (emulated after the #GP: refusals #GP(0), registers that
do not exist #UD, XTF debug-regs' I/O-breakpoint sequence with CR4.DE). No breakpoint is
enabled (ours records the values without arming them: pv/debug_registers.h).
The same assertions on ours (both ptwr= modes) and on Xen 4.17.
"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import guest_boot  # noqa: E402

if __name__ == "__main__":
    guest_boot.selftest_main("debugreg", 30)
