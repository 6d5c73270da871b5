"""selftest=gdt (guest/kernel/selftest_gdt.cpp): HYPERVISOR_set_gdt and update_descriptor as Xen
4.17 serves them: descriptor frames only without writable mappings, descriptors checked (DPL
raised to 3, system descriptors other than call gates refused), a selector of the new GDT loads;
bad lists, too many entries, page tables and foreign frames refused. The same assertions on ours
(both ptwr= modes) and on Xen 4.17.
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
        result = guest_boot.boot_guest(build, hv, "selftest=gdt", hv.poweroff, hypervisor_args=args)
        guest_boot.expect_ended(result, hv, hv.poweroff, 0)
        lines = [l for l in result.lines() if l.startswith("selftest gdt: ")]
        failures = [l for l in lines if ": FAIL" in l]
        machine.expect(not failures, "; ".join(failures), result)
        machine.expect("selftest gdt: passed" in lines, "no 'passed' line", result)
        machine.expect(len(lines) >= 20, f"only {len(lines)} lines", result)
        machine.expect("init exited: status 0" in result.lines(), "init did not run", result)
        print(f"ok: selftest=gdt {args} on {hv.name}, {len(lines)} lines ({result.seconds:.1f} s)")


if __name__ == "__main__":
    main()
