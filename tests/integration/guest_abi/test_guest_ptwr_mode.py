"""pvhv's per-domain ptwr mode at run time (issue 10, "xl ptwr-mode"): its domctl, outside Xen's
numbers (common/xen/pvhv_domctl.h), from dom0's kernel (guest/selftest/memory/selftest_ptwr_mode.cpp).

On ours, under the three boot modes: do_domctl's admission (-EACCES, -ESRCH, -EFAULT), garbage
(-EINVAL, the mode unchanged), dom0's own mode flipped ten times through emulate, writable and
adaptive with plain-store page-table writes in each phase (the counters show emulations and no
detach while emulate, detaches while writable or adaptive; the audit clean after every flip), a switch back to emulate while an L1 is detached
(the switch reattaches it), the boot mode restored, the machine ending with a clean audit. On
Xen 4.17 the same admission answers, and the number itself is -ENOSYS (served: 0).
"""
import os
import re
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import guest_boot  # noqa: E402
import machine  # noqa: E402


def note(result, what):
    match = re.search(rf"^selftest ptwr-mode: {re.escape(what)}: (-?\d+) ", result.serial, re.MULTILINE)
    machine.expect(match is not None, f"no '{what}' note", result)
    return int(match.group(1))


def main():
    build, hv = guest_boot.arguments()
    modes = ["ptwr=emulate", "ptwr=writable", "ptwr=adaptive"] if hv.name == "ours" else [""]
    for mode in modes:
        result = guest_boot.boot_guest(build, hv, "selftest=ptwr-mode", hv.poweroff, hypervisor_args=mode)
        guest_boot.expect_ended(result, hv, hv.poweroff, 0)
        checks = guest_boot.check_selftest(result, "ptwr-mode", 7 if hv.name == "xen417" else 40)
        machine.expect(note(result, "privileged") == 1, "dom0 is not privileged?", result)
        served = note(result, "served")
        machine.expect(served == (1 if hv.name == "ours" else 0),
                       f"{hv.name}: the ptwr-mode domctl served={served}", result)
        if hv.name == "ours":
            boot = note(result, "boot mode (1: writable, 2: adaptive)")
            expected = {"ptwr=emulate": 0, "ptwr=writable": 1, "ptwr=adaptive": 2}[mode]
            machine.expect(boot == expected, f"boot mode {boot} under {mode}", result)
            flips = re.findall(r"^\(XEN\) d0: ptwr mode (\w+)\s*$", result.serial, re.MULTILINE)
            machine.expect(len(flips) >= 6, f"the hypervisor logged {len(flips)} mode changes", result)
        machine.expect("*** hypervisor fault" not in result.serial, "the hypervisor faulted", result)
        where = f"{hv.name} {mode}".strip()
        print(f"ok: {where}: selftest=ptwr-mode, {checks} checks ({result.seconds:.1f} s)")


if __name__ == "__main__":
    main()
