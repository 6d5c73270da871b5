"""The pv-ops page-table layer works in every mode, and the hypervisor's write paths with it.

pte=batched queues entries and commits them with multicall(mmu_update); pte=direct writes L1
entries with plain stores to read-only tables, which the hypervisor emulates (Xen 4.17; ours
with ptwr=emulate) or detaches as writable pagetables (ours with ptwr=writable). Every mode
must boot to a clean init exit, and on ours the frame-table audit must stay clean and the
counters must show that the intended path did the work.
"""
import os
import re
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import guest_boot  # noqa: E402
import machine  # noqa: E402


def counter(serial, name):
    match = re.search(rf"^\(XEN\)\s+{name}\s+(\d+)\s*$", serial, re.MULTILINE)
    return int(match.group(1)) if match else None


def main():
    build, hv = guest_boot.arguments()
    if hv.name == "xen417":
        runs = [("batched", ""), ("direct", "")]
    else:
        runs = [("batched", ""), ("direct", "ptwr=emulate"), ("direct", "ptwr=writable"), ("direct", "ptwr=adaptive")]
    for mode, hypervisor_args in runs:
        label = f"pte={mode} {hypervisor_args}".strip()
        result = guest_boot.boot_guest(build, hv, f"pte={mode}", hv.poweroff, hypervisor_args=hypervisor_args)
        guest_boot.expect_ended(result, hv, hv.poweroff, 0)
        for line in (f"pv: page-table updates by {mode}", "hello from init (pid 1)",
                     "init exited: status 0"):
            machine.expect(line in result.serial, f"{label}: missing '{line}'", result)
        if hypervisor_args == "ptwr=emulate":
            machine.expect(counter(result.serial, "ptwr_emulations") > 1000, f"{label}: writes not emulated", result)
            machine.expect(counter(result.serial, "ptwr_faults") == 0, f"{label}: writable path used", result)
        if hypervisor_args == "ptwr=writable":
            faults, revalidated = counter(result.serial, "ptwr_faults"), counter(result.serial, "ptwr_revalidated")
            machine.expect(faults > 0 and revalidated > 10 * faults,
                           f"{label}: tables not detached ({faults} faults, {revalidated} re-validated)", result)
            machine.expect(counter(result.serial, "ptwr_unhooks") > 0, f"{label}: no table unhooked", result)
        if hypervisor_args == "ptwr=adaptive":
            # Both paths: the boot's runs of writes detach tables, its sparse ones are emulated.
            faults, emulations = counter(result.serial, "ptwr_faults"), counter(result.serial, "ptwr_emulations")
            machine.expect(faults > 0 and emulations > 0,
                           f"{label}: not both paths ({faults} detaches, {emulations} emulations)", result)
        print(f"ok: {label} on {hv.name} ({result.seconds:.1f} s)")


if __name__ == "__main__":
    main()
