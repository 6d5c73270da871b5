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
"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import guest_boot  # noqa: E402
import machine  # noqa: E402


def main():
    build, hv = guest_boot.arguments()
    modes = ["ptwr=emulate", "ptwr=writable", "ptwr=emulate instruction_cache=0"] if hv.name == "ours" else [""]
    for mode in modes:
        result = guest_boot.boot_guest(build, hv, "selftest=emulation-caches", hv.poweroff,
                                       hypervisor_args=mode, timeout=120)
        guest_boot.expect_ended(result, hv, hv.poweroff, 0)
        checks = guest_boot.selftest_lines(result, "emulation-caches")
        guest_boot.check_selftest(result, "emulation-caches", 1)
        landed = sum("it landed in the table the walk finds now: ok" in l for l in checks)
        machine.expect(landed == 6, f"{landed} of 6 stores checked", result)
        machine.expect("the rewritten store stored rdx: ok" in result.serial, "the rewrite was not checked", result)
        machine.expect("*** hypervisor fault" not in result.serial, "the hypervisor faulted", result)
        if hv.name == "ours":
            machine.expect("frame audit: every count agrees with the page tables: ok" in result.serial,
                           "the audit did not run", result)
        if hv.name == "ours" and mode.startswith("ptwr=emulate"):
            emulated = [l for l in checks if "page-table writes emulated meanwhile" in l]
            machine.expect(emulated and int(emulated[0].split(": ")[-1].split()[0]) >= 6,
                           "the stores were not emulated", result)
        where = f"{hv.name} {mode}".strip()
        print(f"ok: {where}: {len(checks)} emulation-cache checks ({result.seconds:.1f} s)")


if __name__ == "__main__":
    main()
