"""Live trace capture end to end: dom0 (the reference guest, `trace=capture`) enables the
hypervisor's trace buffers with XEN_SYSCTL_tbuf_op, maps them, and streams the records over
COM2 while the fork test runs; build/bin/xentrace turns the stream into a trace file and
build/bin/xenalyze reads it. Properties checked on the real trace, in both PTE-write modes:

- every unhook of an L1 is followed by its rehook before the next flush of the address space
  that is not the unhook's own (writable pagetables);
- the emulation records equal the hypervisor's count of emulated writes over the capture
  (emulate);
- no records were lost at the default buffer size;
- every fork is marked, and xenalyze --forks tells its story;
- the vCPU's block and wake-up appear as Xen's runstate records (TRC_SCHED_RUNSTATE_CHANGE),
  and so does the idle vCPU (d32767v0) running meanwhile.
"""
import os
import re
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import guest_boot  # noqa: E402
import machine  # noqa: E402


def capture(build, hv, mode, workdir):
    stream = os.path.join(workdir, f"{mode}.stream")
    kernel = os.path.join(build, "guest", "kernel")
    initrd = os.path.join(build, "guest", "initrd.cpio")
    result = machine.boot(hv.image, f"{hv.append} ptwr={mode}",
                          [(kernel, "pte=direct trace=capture init=/forktest"), (initrd, "")],
                          timeout=180, memory="512M", extra=("-serial", f"file:{stream}"))
    guest_boot.expect_ended(result, hv, hv.poweroff, 0)
    machine.expect("trace: capturing" in result.serial, f"{mode}: capture did not start", result)
    machine.expect("forktest: passed" in result.serial, f"{mode}: fork test failed under tracing", result)
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


def main():
    build, _ = guest_boot.arguments()
    hv = guest_boot.hypervisor(build, "ours")
    with tempfile.TemporaryDirectory() as workdir:
        for mode in ("writable", "emulate"):
            result, trace = capture(build, hv, mode, workdir)
            lines = dump(build, trace)
            names = [line.split()[2] for line in lines if len(line.split()) > 2]
            machine.expect("lost_records" not in names, f"{mode}: records were lost", result)
            forks = names.count("operation_begin")
            machine.expect(forks > 100 and forks == names.count("operation_end"),
                           f"{mode}: {forks} fork markers", result)
            if mode == "writable":
                machine.expect(names.count("ptwr_unhook") > 100, "writable: too few unhooks", result)
                check_unhooks_rehooked(lines, result)
            else:
                emulations = names.count("ptwr")  # TRC_PV_PTWR_EMULATION, named as xenalyze does
                expected = counter_at(result.serial, "stopped") - counter_at(result.serial, "started")
                machine.expect(emulations == expected and emulations > 1000,
                               f"emulate: {emulations} records, hypervisor counted {expected}", result)
            # The boot's timer check blocks the vCPU once: Xen's runstate records show it
            # (running -> blocked, woken: blocked -> runnable -> running).
            changes = [line.split()[-1] for line in lines if " runstate_change d0v0 " in line]
            machine.expect(changes[:3] == ["0->2", "2->1", "1->0"],
                           f"{mode}: runstate records {changes[:3]}", result)
            # Meanwhile the CPU idled: Xen's idle vCPU is d32767v0 (DOMID_IDLE, vcpu = cpu).
            idle = [line.split()[-1] for line in lines if " runstate_change d32767v0 " in line]
            machine.expect(idle[:2] == ["1->0", "0->1"], f"{mode}: idle vCPU runstate records {idle[:2]}", result)
            story = subprocess.run([os.path.join(build, "bin", "xenalyze"), "--forks", trace],
                                   capture_output=True, text=True, check=True).stdout
            machine.expect("=== fork" in story, f"{mode}: no fork story", result)
            print(f"ok: ptwr={mode}: {len(lines)} records, {forks} forks, properties hold")


if __name__ == "__main__":
    main()
