"""selftest=swint with init=/swint (guest/selftest/cpu/selftest_swint.cpp, guest/user/swint.c): what
reaches a PV kernel besides exceptions and system calls, as Xen 4.17 delivers it. `int $n`
through the trap table's DPL (from the kernel, which counts as ring 1, and from user mode),
CALLBACKTYPE_sysenter and a user-mode sysenter delivered to it with Xen's frame (rip 0, rsp 0:
sysenter saves neither), callbacks that cannot be unregistered, VMASST_TYPE_architectural_iopl
(the kernel counts as ring 0) and cli / outb from user mode under a virtual IOPL set by iopl(2).
The same assertions on ours (both ptwr= modes) and on Xen 4.17 (issue 28, from XTF's PV tests).
"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import guest_boot  # noqa: E402
import machine  # noqa: E402

# What Xen's sysenter entry gives the callback for a sysenter from user mode.
SYSENTER_FRAME = "swint: sysenter frame: rip 0x0 cs 0x3 rsp 0x0 ss 0xe02b"
USER_CHECKS = 10


def main():
    build, hv = guest_boot.arguments()
    for mode in (("emulate", "writable") if hv.ends_itself else ("",)):
        args = f"ptwr={mode}" if mode else ""
        result = guest_boot.boot_guest(build, hv, "selftest=swint init=/swint", hv.poweroff, hypervisor_args=args)
        guest_boot.expect_ended(result, hv, hv.poweroff, 0)
        kernel_checks = guest_boot.check_selftest(result, "swint", 15)
        lines = result.lines()
        user = [l for l in lines if l.startswith("swint: ") and l.endswith(": ok")]
        failures = [l for l in lines if l.startswith("swint: ") and "FAIL" in l]
        machine.expect(not failures, "; ".join(failures), result)
        machine.expect(len(user) >= USER_CHECKS + 3, f"only {len(user)} user-mode checks passed", result)
        machine.expect(SYSENTER_FRAME in lines, f"no '{SYSENTER_FRAME}'", result)
        machine.expect("swint: passed" in lines and "init exited: status 0" in lines, "init=/swint failed", result)
        print(f"ok: selftest=swint init=/swint {args} on {hv.name}: {kernel_checks} kernel checks, "
              f"{len(user)} user-mode lines ({result.seconds:.1f} s)")


if __name__ == "__main__":
    main()
