"""The hostile-guest suite, CPU paths (issue 8 items 1, 2, 6, 7, 12), on ours and on Xen 4.17.

dom0 runs the guest's selftest=hostile-cpu (guest/selftest/cpu/selftest_hostile_cpu.cpp: hypercalls
with RFLAGS.NT set, HYPERVISOR_iret to frames the CPU refuses, 64-bit hypercall numbers,
multicall ops with high bits and nested multicalls, 32-bit counts, batches that run across
many time slices, guest memory in a range whose L1 was just written directly, one mmu_update
batch that writes an L1, unlinks it and writes it again, which is then a plain write), then
init=/hostile (guest/user/hostile.c: a user process's syscall with NT set, a compat-mode
syscall, and rdmsr / wrmsr / wbinvd from user mode: #GP, SIGSEGV). On ours each boot runs under ptwr=emulate and ptwr=writable; every check's expected
value is Xen 4.17's, and on ours the machine must end by itself with a clean frame audit.
"""
import os
import re
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import guest_boot  # noqa: E402
import machine  # noqa: E402


def check_suite(result, prefix, name, minimum):
    checks = [l for l in result.lines() if l.startswith(f"{prefix}{name}: ")]
    failures = [l for l in checks if ": FAIL" in l]
    machine.expect(not failures, "; ".join(failures), result)
    machine.expect(f"{prefix}{name}: passed" in result.serial, f"no '{name}: passed' line", result)
    machine.expect(len(checks) >= minimum, f"{name}: only {len(checks)} lines", result)
    return len(checks) - 1


def counter(serial, name):
    m = re.search(rf"^\(XEN\)\s+{name}\s+(\d+)\s*$", serial, re.M)
    return int(m.group(1)) if m else -1


def main():
    build, hv = guest_boot.arguments()
    modes = ["ptwr=emulate", "ptwr=writable"] if hv.name == "ours" else [""]
    for mode in modes:
        result = guest_boot.boot_guest(build, hv, "selftest=hostile-cpu init=/hostile", hv.poweroff,
                                       hypervisor_args=mode, timeout=300)
        guest_boot.expect_ended(result, hv, hv.poweroff, 0)
        kernel_checks = check_suite(result, "", "selftest hostile-cpu", 30)
        user_checks = check_suite(result, "", "hostile", 6)
        machine.expect("hostile: printed from a range whose L1 was just written directly" in result.serial,
                       "the console text from the detached range is missing", result)
        machine.expect("*** hypervisor fault" not in result.serial, "the hypervisor faulted", result)
        where = f"{hv.name} {mode}".strip()
        print(f"ok: {where}: {kernel_checks} kernel and {user_checks} user hostile checks ({result.seconds:.1f} s)")


if __name__ == "__main__":
    main()
