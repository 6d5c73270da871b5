"""Multi-vCPU domains built at boot (issue 30, items 3 and 7; ours only: Xen 4.17 builds no domU
at boot). domU_max_vcpus=4 gives each domU built at boot four vCPUs, vCPU 0 started, the others
down until the guest brings them up itself.

- On one CPU and on four (every vCPU still runs on CPU 0): dom0 (four vCPUs too, dom0_max_vcpus=4
  or the four CPUs) and domain 1 both run selftest=vcpus at once, their vCPUs in one round robin
  (guest/selftest/events/selftest_vcpus*.cpp: VCPUOP_initialise / up of each, work and an IPI ring
  on every vCPU, up/down, per-vCPU timers and areas, the hostile checks; the domctl view only in
  dom0, a domU being refused it). Both pass, dom0's init and the domU's end, the audit is clean.
- The domU's last vCPU taking itself down (selftest=vcpus-down-last) powers domain 1 off while
  dom0 runs on.
- domU_max_vcpus= out of range (0, 9) is a warning and the domU gets one vCPU.
"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import guest_boot  # noqa: E402
import machine  # noqa: E402
from two_domains import boot_two  # noqa: E402


def both_run_vcpus(build, smp, args):
    result = boot_two(build, "selftest=vcpus", "selftest=vcpus", f"domU_max_vcpus=4 {args}".strip(), smp=smp,
                      timeout=300)
    machine.expect("Dom0 has maximum 4 VCPUs" in result.serial and "Dom1 has maximum 4 VCPUs" in result.serial,
                   "not four vCPUs each", result)
    dom0 = guest_boot.check_selftest(result, "vcpus", 150)
    domu = guest_boot.check_selftest(result, "vcpus", 120, prefix="(d1) ")
    machine.expect("init exited: status 0" in result.lines(), "dom0's init did not run", result)
    print(f"ok: -smp {smp} {args or '(four vCPUs by default)'}: dom0 and domain 1 with four vCPUs each passed selftest=vcpus side by side "
          f"({dom0} and {domu} checks), audit clean ({result.seconds:.1f} s)")


def main():
    build = machine.build_dir(sys.argv[2] if len(sys.argv) > 2 and sys.argv[1] == "--build" else None)
    both_run_vcpus(build, 1, "dom0_max_vcpus=4")
    both_run_vcpus(build, 4, "")
    both_run_vcpus(build, 1, "dom0_max_vcpus=4 ptwr=writable")

    result = boot_two(build, "selftest=hypercall", "selftest=vcpus-down-last", "domU_max_vcpus=4")
    lines = guest_boot.selftest_lines(result, "vcpus-down-last", "(d1) ")
    machine.expect(lines and not [line for line in lines if ": FAIL" in line], f"vcpus-down-last: {lines}", result)
    machine.expect("(d1) selftest vcpus-down-last: VCPUOP_down of the last vCPU up: the domain powers off now"
                   in result.lines() and "(d1) init exited" not in result.serial,
                   "domain 1 did not power off at its last vCPU's VCPUOP_down", result)
    machine.expect("init exited: status 0" in result.lines(), "dom0 did not run on", result)
    print(f"ok: domain 1's last vCPU up taking itself down powered it off ({len(lines)} lines), dom0 ran on")

    for bad in ("0", "9"):
        result = boot_two(build, "selftest=hypercall", "selftest=hypercall", f"domU_max_vcpus={bad}")
        machine.expect(f'parameter "domU_max_vcpus" has invalid value "{bad}"' in result.serial,
                       f"domU_max_vcpus={bad}: no warning", result)
        machine.expect("Dom1 has maximum 1 VCPUs" in result.serial, f"domU_max_vcpus={bad}: not one vCPU", result)
    print("ok: domU_max_vcpus=0 and =9 are warned about; the domU gets one vCPU")


if __name__ == "__main__":
    main()
