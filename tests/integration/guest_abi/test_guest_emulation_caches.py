"""The caches of the emulated page-table write path never serve a stale answer: on ours under
ptwr=emulate and ptwr=writable, and on Xen 4.17.

dom0 runs guest/selftest/memory/selftest_emulation_caches.cpp. Translation cache
(xen/emulate/translation_cache.h): a window of a free kernel L2 slot maps an L1 T1 read-only;
plain stores through it are emulated, then the walk is changed without touching the window
and without a flush (the L2 slot relinked through the L2; the mapping L1's entry changed
through its machine address); every store must land in the table the walk finds now.
Decode cache (xen/emulate/decode_cache.h, its write-protected slots): a store instruction in a
frame with no writable mapping writes entries twice, then is rewritten through a second
(writable) mapping of its frame: the next write must be the new instruction's. On ours also
with instruction_cache=0 (the byte-compared cache alone). The boot ends with a clean frame
audit on ours.

selftest=emulation-caches-smp: the same stores made by dom0's vCPU 1 and the changes by its
vCPU 0, each pinned to a CPU of its own (-smp 2, dom0_vcpus_pin; ours with sched_smp=1 under
-icount): each CPU has caches of its own (xen/pv/pte_emulation.cpp, page_fault.cpp), and a
change made on one CPU must invalidate what the other cached. Ours checks that vCPU 1 ran on
CPU 1 only.
"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import guest_boot  # noqa: E402
import machine  # noqa: E402


SMP = "dom0_max_vcpus=2 dom0_vcpus_pin"


def runs(hv):
    """(selftest, hypervisor arguments, -smp, QEMU extra) for each boot."""
    if hv.name != "ours":
        return [("emulation-caches", "", 1, ()), ("emulation-caches-smp", SMP, 2, ())]
    icount = ("-icount", "shift=0")
    return [("emulation-caches", mode, 1, ()) for mode in
            ("ptwr=emulate", "ptwr=writable", "ptwr=emulate instruction_cache=0")] + \
        [("emulation-caches-smp", f"{SMP} sched_smp=1 {mode}", 2, icount) for mode in
         ("ptwr=emulate", "ptwr=emulate instruction_cache=0")]


def main():
    build, hv = guest_boot.arguments()
    for name, mode, smp, extra in runs(hv):
        result = guest_boot.boot_guest(build, hv, f"selftest={name}", hv.poweroff,
                                       hypervisor_args=mode, timeout=180, smp=smp, extra=extra)
        guest_boot.expect_ended(result, hv, hv.poweroff, 0)
        checks = guest_boot.selftest_lines(result, name)
        guest_boot.check_selftest(result, name, 1)
        landed = sum("it landed in the table the walk finds now: ok" in l for l in checks)
        machine.expect(landed == 6, f"{landed} of 6 stores checked", result)
        machine.expect("the rewritten store stored rdx: ok" in result.serial, "the rewrite was not checked", result)
        machine.expect("*** hypervisor fault" not in result.serial, "the hypervisor faulted", result)
        if hv.name == "ours":
            machine.expect("frame audit: every count agrees with the page tables: ok" in result.serial,
                           "the audit did not run", result)
        if hv.name == "ours" and "ptwr=emulate" in mode:
            emulated = [l for l in checks if "page-table writes emulated meanwhile" in l]
            machine.expect(emulated and int(emulated[0].split(": ")[-1].split()[0]) >= 6,
                           "the stores were not emulated", result)
        if smp > 1:
            machine.expect("  as vCPU 1: ok" in result.serial, "the stores did not run on vCPU 1", result)
            if hv.name == "ours":
                machine.expect("(XEN) Domain 0 vCPUs ran on: v0 0 v1 1" in result.lines(),
                               "vCPU 1 did not run on CPU 1 alone", result)
        where = f"{hv.name} {name} {mode}".strip()
        print(f"ok: {where}: {len(checks)} emulation-cache checks ({result.seconds:.1f} s)")


if __name__ == "__main__":
    main()
