"""selftest=debugreg (guest/selftest/cpu/selftest_debugreg.cpp, selftest_debugreg_traps.cpp):
HYPERVISOR_set_debugreg and get_debugreg as Xen 4.17 answers them: reset values, guest addresses
only in DR0-3, DR6 / DR7 reserved bits, general detect and I/O breakpoints refused, DR4 / DR5
aliases, -ENODEV beyond; then the same registers through `mov` (emulated after the #GP: refusals
#GP(0), registers that do not exist #UD, XTF debug-regs' I/O-breakpoint sequence with CR4.DE);
then breakpoints that fire, the registers being loaded into the CPU while the vCPU runs: a data
breakpoint (armed by one write to DR7), an instruction breakpoint and a single step give #DB
with Xen's DR6; a data breakpoint the hypervisor itself hits (xen_version filling a watched
buffer) is dropped in hypervisor context; XSA-260's `mov %ss` before nop / syscall / int3 /
int $0x80 and XSA-265's sticky DR6.BD leave both hypervisors running (QEMU's TCG raises the
delayed #DB at the next instruction, in the guest, on both). init=/debugreg (guest/user/debugreg.c)
does the same from user mode: data and instruction breakpoints, XTF's XSA-260 PoC (`mov %ss;
syscall` on a non-canonical rsp) and XSA-265's, each child killed by SIGTRAP with Xen's DR6.
The same assertions on ours (both ptwr= modes) and on Xen 4.17.

On ours also the hardware's answer to XSA-260, which TCG does not give: the hypervisor option
selftest=syscall-entry-debug puts a data breakpoint on the word the syscall entry's first
instruction writes, so every guest syscall raises #DB inside the entry while rsp is still the
guest's: selftest=debugreg's first check makes a hypercall with the top bit of rsp flipped, as
XSA-260's PoC does, where a #DB without a stack of its own would push its frame (#SS, then a
double fault). The #DB runs on its own stack and is dropped; the selftest and init still pass.
"""
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import guest_boot  # noqa: E402
import machine  # noqa: E402

KERNEL_CHECKS = 130
USER_CHECKS = 25


def main():
    build, hv = guest_boot.arguments()
    for mode in (("emulate", "writable") if hv.ends_itself else ("",)):
        args = f"ptwr={mode}" if mode else ""
        result = guest_boot.boot_guest(build, hv, "selftest=debugreg init=/debugreg", hv.poweroff,
                                       hypervisor_args=args)
        guest_boot.expect_ended(result, hv, hv.poweroff, 0)
        kernel_checks = guest_boot.check_selftest(result, "debugreg", KERNEL_CHECKS)
        lines = result.lines()
        user = [l for l in lines if l.startswith("debugreg: ") and l.endswith(": ok")]
        failures = [l for l in lines if l.startswith("debugreg: ") and "FAIL" in l]
        machine.expect(not failures, "; ".join(failures), result)
        machine.expect(len(user) >= USER_CHECKS, f"only {len(user)} user-mode checks passed", result)
        machine.expect("debugreg: passed" in lines and "init exited: status 0" in lines, "init=/debugreg failed",
                       result)
        print(f"ok: selftest=debugreg init=/debugreg {args} on {hv.name}: {kernel_checks} kernel checks, "
              f"{len(user)} user-mode lines ({result.seconds:.1f} s)")


def symbol_address(image, name):
    symbols = subprocess.run(["nm", image], capture_output=True, text=True, check=True).stdout
    for line in symbols.splitlines():
        fields = line.split()
        if len(fields) == 3 and fields[2] == name:
            return int(fields[0], 16)
    machine.expect(False, f"no symbol {name} in {image}")
    return 0


def syscall_entry_debug(build, hv):
    entry = symbol_address(hv.image, "syscall_entry")
    result = guest_boot.boot_guest(build, hv, "selftest=debugreg", hv.poweroff,
                                   hypervisor_args="selftest=syscall-entry-debug")
    guest_boot.expect_ended(result, hv, hv.poweroff, 0)
    checks = guest_boot.check_selftest(result, "debugreg", KERNEL_CHECKS)
    hits = re.findall(r"#DB in hypervisor context at e008:([0-9a-f]+), stack [0-9a-f]{4}:([0-9a-f]+)", result.serial)
    in_entry = [(int(rip, 16), int(rsp, 16)) for rip, rsp in hits if entry < int(rip, 16) <= entry + 16]
    machine.expect(in_entry, f"no #DB reported inside the syscall entry ({entry:#x}): {hits[:4]}", result)
    guest_stack = [rsp for _, rsp in in_entry if rsp < 0xffff800000000000 or rsp >= 0xffff880000000000]
    machine.expect(len(guest_stack) == len(in_entry), "a #DB in the syscall entry not on the guest's rsp", result)
    flipped = [rsp for _, rsp in in_entry if 0x800000000000 <= rsp < 0xffff800000000000]
    machine.expect(flipped, "no #DB in the syscall entry on the flipped (non-canonical) rsp", result)
    machine.expect("init exited: status 0" in result.lines(), "init did not run", result)
    print(f"ok: selftest=syscall-entry-debug: #DB in the syscall entry on the guest's rsp "
          f"({in_entry[0][1]:#x}, and {flipped[0]:#x} flipped) dropped, {checks} debugreg checks and init passed")


if __name__ == "__main__":
    main()
    BUILD, HV = guest_boot.arguments()
    if HV.name == "ours":
        syscall_entry_debug(BUILD, HV)
