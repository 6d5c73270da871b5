"""A domU kernel executes a privileged instruction that no hypervisor performs for a PV kernel
(`hlt`, which Xen 4.17's emul-priv-op refuses as ours does) with no trap table
(selftest=hostile-privop-crash): the #GP cannot be delivered, so the domU alone is crashed, and
the hypervisor names the vCPU, the RIP and the instruction's bytes before it does; dom0 runs on,
the machine ends by itself with a clean audit (two_domains.boot_two).
"""
import os
import re
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import guest_boot  # noqa: E402
import machine  # noqa: E402
from two_domains import boot_two  # noqa: E402


def main():
    build, _ = guest_boot.arguments()
    result = boot_two(build, "init=/forktest", "selftest=hostile-privop-crash", "",
                      domu_ending="Domain 1 crashed: reason crash")
    report = re.search(r"^\(XEN\) d1v0 #GP not emulated at ([0-9a-f]+) \(kernel mode\), bytes f4( [0-9a-f]{2})*: "
                       r"no handler, crashing the domain", result.serial, re.M)
    machine.expect(report is not None, "no report of d1's hlt with its RIP and bytes", result)
    machine.expect("d1v0 unhandled exception 13" in result.serial, "no unhandled #GP message for d1", result)
    machine.expect("still running after hlt" not in result.serial, "the domU ran past its hlt", result)
    machine.expect("forktest: passed" in result.lines(), "dom0 did not finish", result)
    print(f"ok: d1's kernel-mode hlt with no trap table crashed d1 alone, reported at {report.group(1)} "
          f"({result.seconds:.1f} s)")


if __name__ == "__main__":
    main()
