"""A fault inside the hypervisor prints the registers, the faulting address and a backtrace,
then halts the CPU (the machine stays up, silent: the test ends it once the report is out).

A second boot overflows the hypervisor's entry stack (selftest=stack-overflow): the guard
page below it turns the overflow into a double fault, reported from the #DF's own stack
(IST), instead of a triple fault that ends the machine with nothing on the console."""
import argparse
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import boot as run  # noqa: E402
import machine  # noqa: E402


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--build", default=None)
    build = machine.build_dir(parser.parse_args().build)
    boot = machine.boot(machine.ours(build), "loglvl=info selftest=hypervisor-fault", run.dom0_modules(build),
                        timeout=60, until="halting")
    machine.expect(not boot.timed_out, "no fault report before the timeout", boot)
    machine.expect("*** hypervisor fault: page fault (in hypervisor context) ***" in boot.serial,
                   "no fault banner", boot)
    machine.expect("cr2: ffff8123deadb000" in boot.serial, "cr2 not reported", boot)
    frames = re.findall(r"\[<(ffff82d0[0-9a-f]{8})>\]", boot.serial)
    machine.expect(len(frames) >= 3, f"backtrace too short: {frames}", boot)
    machine.expect("Starting dom0" not in boot.serial, "boot continued after the fault", boot)
    # The addresses must resolve to the functions that faulted.
    names = subprocess.run(["addr2line", "-f", "-C", "-e", machine.ours(build), *frames[:3]],
                           capture_output=True, text=True).stdout
    machine.expect("read_unmapped" in names and "hypervisor_fault_selftest" in names,
                   f"backtrace does not resolve to the faulting functions:\n{names}", boot)
    print("ok: hypervisor fault reported with registers and a resolvable backtrace, CPU halted")

    boot = machine.boot(machine.ours(build), "loglvl=info selftest=stack-overflow", run.dom0_modules(build),
                        timeout=60, until="halting")
    machine.expect(not boot.timed_out, "no report of the stack overflow before the timeout", boot)
    machine.expect("selftest: overflowing the hypervisor stack on purpose" in boot.serial, "selftest did not run", boot)
    machine.expect("*** hypervisor fault: double fault (a hypervisor stack overflowed into its guard page?) ***"
                   in boot.serial, "no double-fault report", boot)
    machine.expect("Starting dom0" not in boot.serial, "boot continued after the overflow", boot)
    print("ok: a hypervisor stack overflow hit its guard page and was reported as a double fault")


if __name__ == "__main__":
    main()
