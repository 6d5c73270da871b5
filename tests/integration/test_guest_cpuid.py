"""selftest=cpuid (guest/kernel/selftest_cpuid.cpp): Xen's forced-emulation CPUID from the guest
kernel (`ud2; .ascii "xen"; cpuid`, as Linux's xen_cpuid), answered with Xen 4.17's PV policy:
the hypervisor leaves, the HYPERVISOR bit, hidden VMX/MONITOR, zeros for unknown leaves; the
prefix before anything but cpuid stays #UD. The same assertions on ours (both ptwr= modes) and
on Xen 4.17.
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import guest_boot  # noqa: E402
import machine  # noqa: E402


def main():
    build, hv = guest_boot.arguments()
    modes = ("emulate", "writable") if hv.ends_itself else ("",)
    for mode in modes:
        args = f"ptwr={mode}" if mode else ""
        result = guest_boot.boot_guest(build, hv, "selftest=cpuid", hv.poweroff, hypervisor_args=args)
        guest_boot.expect_ended(result, hv, hv.poweroff, 0)
        lines = [l for l in result.lines() if l.startswith("selftest cpuid: ")]
        failures = [l for l in lines if ": FAIL" in l]
        machine.expect(not failures, "; ".join(failures), result)
        machine.expect("selftest cpuid: passed" in lines, "no 'passed' line", result)
        machine.expect(len(lines) >= 40, f"only {len(lines)} lines", result)
        machine.expect("init exited: status 0" in result.lines(), "init did not run", result)
        print(f"ok: selftest=cpuid {args} on {hv.name}, {len(lines)} lines ({result.seconds:.1f} s)")


if __name__ == "__main__":
    main()
