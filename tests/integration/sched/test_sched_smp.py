"""Guests on every CPU (issue 30, item 2; ours only: sched_smp=1, the per-CPU run queues, placement,
migration and the hypervisor lock, sched/scheduler). The hypervisor prints, as each domain stops,
which CPUs each of its vCPUs ran on ("Domain 0 vCPUs ran on: v0 0 v1 1 ...").

- -smp 4, dom0 with four vCPUs runs selftest=vcpus (work, an IPI ring, up/down, per-vCPU timers
  and runstate areas, the domctl view, the hostile checks) with its vCPUs spread over the CPUs:
  all four CPUs used, the selftest passes, the audit is clean.
- The same under ptwr=writable (a domain on several CPUs detaches inactive tables only).
- dom0_vcpus_pin (hard affinity vCPU n -> CPU n): each vCPU ran on its own CPU and no other.
- A four-vCPU domU built at boot beside a four-vCPU dom0, both running selftest=vcpus at once
  (events between vCPUs on different CPUs: the 2-level bitmaps are changed atomically), under
  -icount shift=0.
- pausedomain returns only when every vCPU of the domain is off its CPU (Xen's vcpu_sleep_sync):
  dom0 pauses a domU running forktest on another CPU 40 times (selftest=domctl-pause-sync).
- destroydomain of a domU that runs on another CPU (selftest=lifecycle-domu), ptwr=emulate and
  writable: the destroy waits for it to leave its CPU; the audit is clean.
- sched_smp=0 at -smp 4 keeps every vCPU on CPU 0 (the APs parked), as before.
- sched_smp=1 at -smp 1 is the single-CPU scheduler (no "Scheduling guests on" line).
"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import guest_boot  # noqa: E402
import machine  # noqa: E402
from two_domains import boot_two  # noqa: E402


def dom0_vcpus(build, hv, args):
    result = guest_boot.boot_guest(build, hv, "selftest=vcpus", hv.poweroff, smp=4,
                                   hypervisor_args=f"sched_smp=1 {args}".strip(), timeout=300)
    guest_boot.expect_ended(result, hv, hv.poweroff, 0)
    machine.expect("Scheduling guests on 4 CPUs" in result.serial, "the APs did not join the scheduler", result)
    checks = guest_boot.check_selftest(result, "vcpus", 150)
    return result, checks, guest_boot.cpus_used(result, 0)


def main():
    build, hv = guest_boot.arguments()

    result, checks, used = dom0_vcpus(build, hv, "")
    every = set().union(*used.values())
    machine.expect(len(used) == 4 and every == {0, 1, 2, 3}, f"dom0's vCPUs did not use all four CPUs: {used}", result)
    print(f"ok: -smp 4 sched_smp=1: dom0's four vCPUs passed selftest=vcpus ({checks} checks) on CPUs {used}")

    result, checks, used = dom0_vcpus(build, hv, "ptwr=writable")
    machine.expect(len(set().union(*used.values())) >= 2, f"one CPU only under ptwr=writable: {used}", result)
    print(f"ok: -smp 4 sched_smp=1 ptwr=writable: selftest=vcpus passed ({checks} checks) on CPUs {used}")

    result, checks, used = dom0_vcpus(build, hv, "dom0_vcpus_pin")
    machine.expect(used == {0: {0}, 1: {1}, 2: {2}, 3: {3}}, f"pinned vCPUs ran elsewhere: {used}", result)
    print(f"ok: dom0_vcpus_pin: vCPU n ran on CPU n alone ({checks} checks)")

    # Under -icount (the CPUs round robin on one thread): eight vCPUs on four host threads of a
    # loaded two-core host let guest time (the TSC, host time) outrun a vCPU's progress, and the
    # selftest's 2 s waits and its 1 ms periodic timer then fail for want of host CPU.
    result = boot_two(build, "selftest=vcpus", "selftest=vcpus", "domU_max_vcpus=4 sched_smp=1", smp=4, timeout=300,
                      extra=("-icount", "shift=0"))
    dom0 = guest_boot.check_selftest(result, "vcpus", 150)
    domu = guest_boot.check_selftest(result, "vcpus", 120, prefix="(d1) ")
    machine.expect("init exited: status 0" in result.lines(), "dom0's init did not run", result)
    both = set().union(*guest_boot.cpus_used(result, 0).values(), *guest_boot.cpus_used(result, 1).values())
    machine.expect(both == {0, 1, 2, 3}, f"dom0 and domain 1 did not use all four CPUs: {both}", result)
    print(f"ok: a four-vCPU domU beside a four-vCPU dom0, selftest=vcpus in both ({dom0} and {domu} checks), "
          f"CPUs used {sorted(both)}")

    result = boot_two(build, "selftest=domctl-pause-sync", "init=/forktest", "sched_smp=1 dom0_max_vcpus=1", smp=4,
                      timeout=300)
    checks = guest_boot.check_selftest(result, "domctl-pause-sync", 2)
    machine.expect("init exited: status 0" in result.lines(), "dom0's init did not run", result)
    print(f"ok: pausedomain returned with domain 1 off every CPU, 40 times, its vCPU running on another CPU "
          f"in between ({checks} checks)")

    for mode in ("ptwr=emulate", "ptwr=writable"):
        result = boot_two(build, "selftest=lifecycle-domu",
                          "selftest=evtchn-fifo+lifecycle-unprivileged pte=direct init=/forktest", f"sched_smp=1 {mode}",
                          domu_ending="Domain 1 destroyed", smp=4, timeout=300)
        checks = guest_boot.check_selftest(result, "lifecycle-domu", 8)
        machine.expect("Scheduling guests on 4 CPUs" in result.serial, "the APs did not join the scheduler", result)
        print(f"ok: {mode}: destroydomain of domain 1 running on another CPU ({checks} checks), audit clean")

    result = guest_boot.boot_guest(build, hv, "selftest=vcpus", hv.poweroff, smp=4, hypervisor_args="sched_smp=0",
                                   timeout=300)
    guest_boot.expect_ended(result, hv, hv.poweroff, 0)
    guest_boot.check_selftest(result, "vcpus", 150)
    machine.expect("Scheduling guests on" not in result.serial and "vCPUs ran on" not in result.serial,
                   "sched_smp=0 at -smp 4 ran guests on the APs", result)
    print("ok: sched_smp=0 at -smp 4 keeps every vCPU on CPU 0")

    result = guest_boot.boot_guest(build, hv, "selftest=vcpus", hv.poweroff, smp=1,
                                   hypervisor_args="sched_smp=1 dom0_max_vcpus=4", timeout=300)
    guest_boot.expect_ended(result, hv, hv.poweroff, 0)
    guest_boot.check_selftest(result, "vcpus", 150)
    machine.expect("Scheduling guests on" not in result.serial, "sched_smp=1 at -smp 1 changed the scheduler", result)
    print("ok: sched_smp=1 at -smp 1 keeps the one-CPU scheduler")


if __name__ == "__main__":
    main()
