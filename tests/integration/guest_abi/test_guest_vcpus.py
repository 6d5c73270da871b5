"""A multi-vCPU dom0 (issue 30, items 3 and 7): the reference kernel on every vCPU of its domain,
on ours and on Xen 4.17 with the same checks (guest/selftest/events/selftest_vcpus*.cpp).

- dom0's vCPU count as Xen's dom0_max_vcpus(): the online CPUs by default (-smp 4: four; both
  print "Dom0 has maximum 4 VCPUs"), dom0_max_vcpus=N, N-M, -M; beyond ours' 8 per domain ours
  gives 8 (Xen: as asked).
- selftest=vcpus with dom0_max_vcpus=4 on a one-CPU machine and with the default on four CPUs
  (ours runs every vCPU on CPU 0; Xen spreads them): the hostile VCPUOP, context and binding
  checks, then every vCPU brought up with VCPUOP_initialise / up, running work, an IPI ring,
  up/down of the others and of vCPU 0, per-vCPU timers and areas, the domctl view; on ours also
  under ptwr=writable. init runs after it.
- selftest=vcpus-fifo: FIFO control blocks per vCPU, events in the queues of the vCPU their port
  notifies, dropped for a vCPU without a block.
- selftest=vcpus-down-last: vCPU 0 taking itself down as the last vCPU up powers dom0 off
  (Xen's domain_shutdown(SHUTDOWN_poweroff)); init never runs.
"""
import os
import re
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import guest_boot  # noqa: E402
import machine  # noqa: E402


def vcpus_of(result):
    counts = re.findall(r"Dom0 has maximum (\d+) VCPUs", result.serial)
    machine.expect(len(counts) == 1, f"expected one 'Dom0 has maximum N VCPUs' line, got {counts}", result)
    return int(counts[0])


def boot(build, hv, selftest, smp=1, args=""):
    result = guest_boot.boot_guest(build, hv, f"selftest={selftest}", hv.poweroff, smp=smp, hypervisor_args=args,
                                   timeout=300)
    guest_boot.expect_ended(result, hv, hv.poweroff, 0)
    return result


def counts(build, hv):
    """dom0_max_vcpus= in Xen's forms; the guest's own count (VCPUOP_is_up's probe) agrees."""
    cases = [(4, "", 4), (4, "dom0_max_vcpus=2", 2), (1, "dom0_max_vcpus=3-", 3), (4, "dom0_max_vcpus=-2", 2),
             (1, "dom0_max_vcpus=2-6", 2)]
    cases.append((1, "dom0_max_vcpus=12", 8 if hv.name == "ours" else 12))
    for smp, args, expected in cases:
        result = boot(build, hv, "vcpus-fifo" if expected >= 3 else "hypercall", smp, args)
        machine.expect(vcpus_of(result) == expected, f"-smp {smp} {args}: dom0 has {vcpus_of(result)} vCPUs", result)
        if expected >= 3:
            guest_boot.check_selftest(result, "vcpus-fifo", 20)
            seen = min(expected, 8)  # the guest looks at 8 at most (its kMaxVcpus)
            machine.expect(f"selftest vcpus-fifo: vCPUs: {seen} " in result.serial, "the guest's count", result)
        print(f"ok: {hv.name}: -smp {smp} {args or '(default)'}: Dom0 has maximum {expected} VCPUs")


def main():
    build, hv = guest_boot.arguments()
    runs = [(1, "dom0_max_vcpus=4"), (4, "")]
    if hv.name == "ours":
        runs.append((1, "dom0_max_vcpus=4 ptwr=writable"))
    for smp, args in runs:
        result = boot(build, hv, "vcpus", smp, args)
        machine.expect(vcpus_of(result) == 4, f"-smp {smp} {args}: not 4 vCPUs", result)
        checks = guest_boot.check_selftest(result, "vcpus", 150)
        machine.expect("init exited: status 0" in result.lines(), "init did not run after selftest=vcpus", result)
        print(f"ok: {hv.name}: -smp {smp} {args or '(4 vCPUs by default)'}: selftest=vcpus, {checks} checks "
              f"({result.seconds:.1f} s)")

    result = boot(build, hv, "vcpus-down-last", 1, "dom0_max_vcpus=4")
    checks = len(guest_boot.selftest_lines(result, "vcpus-down-last"))
    failures = [line for line in guest_boot.selftest_lines(result, "vcpus-down-last") if ": FAIL" in line]
    machine.expect(not failures and checks >= 10, f"vcpus-down-last: {failures or checks}", result)
    machine.expect("the domain powers off now" in result.serial and "init exited" not in result.serial,
                   "dom0 did not power off at its last vCPU's VCPUOP_down", result)
    print(f"ok: {hv.name}: VCPUOP_down of the last vCPU up powered dom0 off ({checks} lines)")

    counts(build, hv)


if __name__ == "__main__":
    main()
