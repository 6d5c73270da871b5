"""Live trace capture for the integration tests: boot dom0 with `trace=capture`, turn the
COM2 stream into a trace file with build/bin/xentrace, and check properties of the records
with build/bin/xenalyze --dump-all."""
import os
import re
import subprocess

import guest_boot
import machine


def capture(build, hv, mode, workdir, init="/forktest", passed="forktest: passed", timeout=180, smp=1,
            hypervisor_args="", kernel_args=""):
    """Boots dom0 with trace=capture running `init` (with its arguments) under ptwr=`mode`;
    returns the boot result and the trace file xentrace made of the stream. smp: the machine's
    CPUs; hypervisor_args, kernel_args: more options for the hypervisor and dom0."""
    stream = os.path.join(workdir, f"{mode}.stream")
    kernel = os.path.join(build, "guest", "kernel")
    initrd = os.path.join(build, "guest", "initrd.cpio")
    result = machine.boot(hv.image, f"{hv.append} ptwr={mode} {hypervisor_args}".strip(),
                          [(kernel, f"{kernel_args} pte=direct trace=capture init={init}".strip()), (initrd, "")],
                          timeout=timeout, memory="512M", extra=("-serial", f"file:{stream}"), smp=smp,
                          until=None if hv.ends_itself else hv.poweroff)
    guest_boot.expect_ended(result, hv, hv.poweroff, 0)
    machine.expect("trace: capturing" in result.serial, f"{mode}: capture did not start", result)
    machine.expect(passed in result.serial, f"{mode}: workload failed under tracing ('{passed}' missing)", result)
    trace = os.path.join(workdir, f"{mode}.trace")
    run = subprocess.run([os.path.join(build, "bin", "xentrace"), f"--input={stream}", trace],
                         capture_output=True, text=True)
    machine.expect(run.returncode == 0, f"{mode}: xentrace failed: {run.stderr}", result)
    machine.expect("0 bytes skipped, 0 lost by streamer" in run.stderr + run.stdout,
                   f"{mode}: stream damaged: {run.stderr}", result)
    return result, trace


def dump(build, trace):
    run = subprocess.run([os.path.join(build, "bin", "xenalyze"), "--dump-all", trace],
                         capture_output=True, text=True, check=True)
    return run.stdout.splitlines()


def check_unhooks_rehooked(lines, result):
    pending = {}  # mfn -> line number of its unhook
    for number, line in enumerate(lines):
        if m := re.search(r"ptwr_unhook l1 mfn ([0-9a-f]+)", line):
            pending[m.group(1)] = number
        elif m := re.search(r"ptwr_rehook l1 mfn ([0-9a-f]+)", line):
            pending.pop(m.group(1), None)
        elif m := re.search(r"tlb_flush scope \d reason (\d+)", line):
            # reason 1 is the unhook's own flush; any other flush must find nothing unhooked
            machine.expect(m.group(1) == "1" or not pending,
                           f"flush at line {number} with unhooked tables {sorted(pending)}", result)
    machine.expect(not pending, f"unhooks never rehooked: {sorted(pending)}", result)


def counter_at(serial, when):
    m = re.search(rf"trace: {when} at emulations=(\d+)", serial)
    return int(m.group(1)) if m else None


def record_names(lines):
    return [line.split()[2] for line in lines if len(line.split()) > 2]


def check_emulations_counted(lines, result):
    """Every emulated write between start and stop of the capture has its record."""
    emulations = record_names(lines).count("ptwr")  # TRC_PV_PTWR_EMULATION, named as xenalyze does
    expected = counter_at(result.serial, "stopped") - counter_at(result.serial, "started")
    machine.expect(emulations == expected and emulations > 1000,
                   f"emulate: {emulations} records, hypervisor counted {expected}", result)
    return emulations
