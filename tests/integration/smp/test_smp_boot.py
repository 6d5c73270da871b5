"""The hypervisor brings up every CPU QEMU gives it (-smp 1, 2, 4, 8) and parks the others:
it prints Xen's "Brought up N CPUs", and dom0's self-tests pass as on one CPU (nothing runs on
the other CPUs yet). maxcpus=2 on a 4-CPU machine brings up 2, as on Xen."""
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
    counts = re.findall(r"^\(XEN\) Brought up (\d+) CPUs$", result.serial, re.M)
    machine.expect(len(counts) == 1, f"expected one 'Brought up N CPUs' line, got {counts}", result)
    return int(counts[0])


def main():
    build, hv = guest_boot.arguments()
    machine.expect(hv.name == "ours", "ours only")
    for i, smp in enumerate((1, 2, 4, 8)):
        selftest = SELFTESTS[i % len(SELFTESTS)]
        result = boot(build, hv, smp, selftest)
        machine.expect(brought_up(result) == smp, f"-smp {smp}: brought up {brought_up(result)} CPUs", result)
        print(f"ok: -smp {smp}: Brought up {smp} CPUs, dom0 selftest={selftest} passed ({result.seconds:.1f} s)")

    result = boot(build, hv, 4, "mmu", "maxcpus=2")
    machine.expect(brought_up(result) == 2, f"maxcpus=2 at -smp 4: brought up {brought_up(result)} CPUs", result)
    print(f"ok: maxcpus=2 at -smp 4: Brought up 2 CPUs, dom0 selftest=mmu passed ({result.seconds:.1f} s)")


if __name__ == "__main__":
    main()
