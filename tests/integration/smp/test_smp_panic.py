"""A panic on any CPU stops the others before it prints, and is printed once.

At -smp 4, once all CPUs are up, one faults inside the hypervisor: the last AP
(selftest=ap-fault; the boot CPU spins in the hypervisor with interrupts off, so the halt IPI
cannot reach it and the NMI that follows must) or the boot CPU (selftest=bsp-fault; the APs
are parked and take the halt IPI). The fault report must name that CPU, appear once, and be the last thing the
machine says: the halt IPI stopped the three others (none is reported as not stopping), and
nothing is printed after the panic line however long the machine stays up."""
import argparse
import os
import re
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import boot as run  # noqa: E402
import machine  # noqa: E402

QUIET_SECONDS = 3.0  # how long the machine must stay silent after its panic line


def panic_on(build, selftest, cpu):
    seen = {}

    def quiet_after_panic(serial):
        if "halting" not in serial:
            return False
        seen.setdefault("at", time.monotonic())
        return time.monotonic() - seen["at"] > QUIET_SECONDS

    boot = machine.boot(machine.ours(build), f"loglvl=info selftest={selftest}", run.dom0_modules(build),
                        timeout=120, watch=quiet_after_panic, smp=4)
    machine.expect(not boot.timed_out, "no panic before the timeout", boot)
    machine.expect("(XEN) Brought up 4 CPUs" in boot.serial, "not all 4 CPUs came up", boot)
    machine.expect(f"selftest: CPU{cpu} faulting inside the hypervisor on purpose" in boot.serial,
                   f"CPU{cpu} did not fault", boot)
    banners = boot.serial.count("*** hypervisor fault: page fault (in hypervisor context) ***")
    machine.expect(banners == 1, f"{banners} fault reports, expected one", boot)
    machine.expect(boot.serial.count("Panic: ") == 1, "the panic is not printed exactly once", boot)
    machine.expect(re.search(rf"^\(XEN\) CPU: {cpu}\r?$", boot.serial, re.M), f"the report does not name CPU {cpu}",
                   boot)
    machine.expect("cr2: ffff8123deadb000" in boot.serial, "cr2 not reported", boot)
    machine.expect("did not stop" not in boot.serial, "another CPU did not stop", boot)
    machine.expect("Starting dom0" not in boot.serial, "boot went on after the fault", boot)
    tail = boot.serial.rstrip().splitlines()[-2:]
    machine.expect(tail[-1].endswith("****************************************") and "halting" in tail[0],
                   f"something was printed after the panic: {tail}", boot)
    print(f"ok: -smp 4, selftest={selftest}: CPU{cpu}'s fault stopped the 3 other CPUs, its panic printed once "
          f"and nothing after ({QUIET_SECONDS:.0f} s quiet)")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--build", default=None)
    build = machine.build_dir(parser.parse_args().build)
    panic_on(build, "ap-fault", 3)
    panic_on(build, "bsp-fault", 0)


if __name__ == "__main__":
    main()
