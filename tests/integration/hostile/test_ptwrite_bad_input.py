"""Bad input on the direct page-table write paths, in both hypervisor modes (ptwr=emulate and
ptwr=writable), with the guest writing its page tables by plain stores (pte=direct):

- a write that would break isolation (a writable mapping of a page table, an address beyond
  the machine) never takes effect: emulation faults it, writable pagetables refuse it at
  re-validation, and the entry keeps its old value either way;
- instructions the emulator refuses (a store straddling two entries, rep stosq, movnti) come
  back to the guest as page faults it handles, and the domain keeps running;
- tearing down an address space while one of its tables is detached leaves every count right:
  the hypervisor's frame-table audit at the end is clean.
"""
import os
import re
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import guest_boot  # noqa: E402
import machine  # noqa: E402


def main():
    build, _ = guest_boot.arguments()
    hv = guest_boot.hypervisor(build, "ours")
    for mode in ("emulate", "writable"):
        result = guest_boot.boot_guest(build, hv, "pte=direct selftest=ptwrite", hv.poweroff,
                                       hypervisor_args=f"ptwr={mode}")
        guest_boot.expect_ended(result, hv, hv.poweroff, 0)  # includes "audit: clean"
        failures = [l for l in result.lines() if l.startswith("selftest ptwrite:") and "FAIL" in l]
        machine.expect(not failures, f"ptwr={mode}: " + "; ".join(failures), result)
        machine.expect("selftest ptwrite: passed" in result.serial, f"ptwr={mode}: self-test did not pass", result)
        machine.expect("init exited: status 0" in result.serial, f"ptwr={mode}: the domain did not carry on", result)
        refusals = int(re.search(r"ptwr_emulation_refusals\s+(\d+)", result.serial).group(1))
        machine.expect(refusals >= 5, f"ptwr={mode}: only {refusals} refusals counted", result)
        if mode == "writable":
            machine.expect("refused at reattach" in result.serial,
                           "writable: the refused direct write was not reported at re-validation", result)
        print(f"ok: ptwr={mode}: refused writes had no effect, unemulable stores faulted, audit clean")


if __name__ == "__main__":
    main()
