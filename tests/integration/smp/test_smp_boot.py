"""The hypervisor brings up every CPU QEMU gives it (-smp 1, 2, 4, 8) and parks the others:
it prints Xen's "Brought up N CPUs", and dom0's self-tests pass as on one CPU (with guests on
every CPU, the default, dom0's vCPU 0 may run on any of them); beyond 8 CPUs the rest are reported and ignored. maxcpus=2 on a 4-CPU machine brings up 2, as on Xen, and maxcpus=1 one. An AP that does not
report in (selftest=ap-hang) is left out after 100 ms and the boot goes on.
Under -icount (which runs all CPUs round robin on one thread) a 4-CPU boot is deterministic:
two runs report the same guest time to the nanosecond, as the benchmarks need."""
import os
import re
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import machine  # noqa: E402
import guest_boot  # noqa: E402

SELFTESTS = ("hypercall", "mmu", "tbuf")


def boot(build, hv, smp, selftest, hypervisor_args=""):
    result = guest_boot.boot_guest(build, hv, f"selftest={selftest}", hv.poweroff, smp=smp,
                                   hypervisor_args=hypervisor_args)
    guest_boot.expect_ended(result, hv, hv.poweroff, 0)
    guest_boot.check_selftest(result, selftest, 8)
    machine.expect("init exited: status 0" in result.serial, f"-smp {smp}: init did not run", result)
    machine.expect("left out" not in result.serial and "ACPI:" not in result.serial,
                   f"-smp {smp}: a CPU left out or the ACPI tables refused", result)
    return result


def brought_up(result):
    counts = re.findall(r"^\(XEN\) Brought up (\d+) CPUs\r?$", result.serial, re.M)
    machine.expect(len(counts) == 1, f"expected one 'Brought up N CPUs' line, got {counts}", result)
    return int(counts[0])


def main():
    build, hv = guest_boot.arguments()
    machine.expect(hv.name == "ours", "ours only")
    for smp in (1, 2, 4, 8):
        for selftest in SELFTESTS:
            result = boot(build, hv, smp, selftest)
            machine.expect(brought_up(result) == smp, f"-smp {smp}: brought up {brought_up(result)} CPUs", result)
            print(f"ok: -smp {smp}: Brought up {smp} CPUs, dom0 selftest={selftest} passed ({result.seconds:.1f} s)")

    for maxcpus, expected in ((2, 2), (1, 1), (8, 4)):
        result = boot(build, hv, 4, "mmu", f"maxcpus={maxcpus}")
        machine.expect(brought_up(result) == expected,
                       f"maxcpus={maxcpus} at -smp 4: brought up {brought_up(result)} CPUs", result)
        print(f"ok: maxcpus={maxcpus} at -smp 4: Brought up {expected} CPUs, dom0 selftest=mmu passed")

    # More CPUs than the hypervisor's 8: the first 8 come up, the rest are reported and ignored.
    result = guest_boot.boot_guest(build, hv, "selftest=mmu", hv.poweroff, smp=12)
    guest_boot.expect_ended(result, hv, hv.poweroff, 0)
    machine.expect(brought_up(result) == 8, f"-smp 12: brought up {brought_up(result)} CPUs", result)
    machine.expect("ACPI: 4 more enabled CPUs than the hypervisor's 8: ignored" in result.serial,
                   "-smp 12: the ignored CPUs are not reported", result)
    print("ok: -smp 12: Brought up 8 CPUs, 4 reported and ignored")

    # An AP that never reports in (selftest=ap-hang: it stops on arrival) is given up after
    # 100 ms, reported, and the machine boots on without it.
    result = guest_boot.boot_guest(build, hv, "selftest=mmu", hv.poweroff, smp=4, hypervisor_args="selftest=ap-hang")
    guest_boot.expect_ended(result, hv, hv.poweroff, 0)
    guest_boot.check_selftest(result, "mmu", 8)
    machine.expect(brought_up(result) == 3, f"ap-hang at -smp 4: brought up {brought_up(result)} CPUs", result)
    machine.expect("CPU3 (APIC id 3) started but did not report in within 100 ms: left out" in result.serial,
                   "the hanging AP is not reported", result)
    print("ok: -smp 4, an AP that never reports in: left out after 100 ms, Brought up 3 CPUs, dom0 passed")

    times = []
    for _ in range(2):
        result = machine.boot(hv.image, hv.append, [(os.path.join(build, "guest", "kernel"), "selftest=mmu"),
                                                    (os.path.join(build, "guest", "initrd.cpio"), "")],
                              timeout=180, smp=4, extra=("-icount", "shift=0"))
        guest_boot.expect_ended(result, hv, hv.poweroff, 0)
        machine.expect(brought_up(result) == 4, "-icount -smp 4: not 4 CPUs", result)
        times.append(re.findall(r"time: system (\d+) ns", result.serial))
        machine.expect(times[-1], "no guest time line", result)
    machine.expect(times[0] == times[1], f"-icount -smp 4 is not deterministic: guest times {times}")
    print(f"ok: -icount shift=0 -smp 4 twice: the same guest time, {times[0][0]} ns")


if __name__ == "__main__":
    main()
