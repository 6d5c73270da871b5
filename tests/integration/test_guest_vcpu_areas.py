"""selftest=vcpu-areas (guest/kernel/selftest_vcpu_areas.cpp): VCPUOP_register_runstate_memory_area
and VCPUOP_register_vcpu_info as Xen 4.17 serves them (the areas written at once and kept up to
date, bad offsets, page tables, foreign frames, hypervisor addresses and a second registration
refused), after which the kernel runs to its end on the moved vcpu_info. The same assertions on
ours (both ptwr= modes) and on Xen 4.17.
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
        result = guest_boot.boot_guest(build, hv, "selftest=vcpu-areas", hv.poweroff, hypervisor_args=args)
        guest_boot.expect_ended(result, hv, hv.poweroff, 0)
        lines = [l for l in result.lines() if l.startswith("selftest vcpu-areas: ")]
        failures = [l for l in lines if ": FAIL" in l]
        machine.expect(not failures, "; ".join(failures), result)
        machine.expect("selftest vcpu-areas: passed" in lines, "no 'passed' line", result)
        machine.expect(len(lines) >= 15, f"only {len(lines)} lines", result)
        machine.expect("init exited: status 0" in result.lines(), "init did not run", result)
        print(f"ok: selftest=vcpu-areas {args} on {hv.name}, {len(lines)} lines ({result.seconds:.1f} s)")


if __name__ == "__main__":
    main()
