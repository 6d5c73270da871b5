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
- the two hypercalls dom0 makes that are refused (-ENOSYS: 63, an empty slot of the table,
  and 100, beyond it) are recorded as every other hypercall (TRC_PV_HYPERCALL_V2);
- the vCPU's block and wake-up appear as Xen's runstate records (TRC_SCHED_RUNSTATE_CHANGE),
  and so does the idle vCPU (d32767v0) running meanwhile.
"""
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import guest_boot  # noqa: E402
import machine  # noqa: E402
from trace_capture_run import (capture, check_emulations_counted, check_unhooks_rehooked,  # noqa: E402
                               dump, record_names)


def main():
    build, _ = guest_boot.arguments()
    hv = guest_boot.hypervisor(build, "ours")
    with tempfile.TemporaryDirectory() as workdir:
        for mode in ("writable", "emulate"):
            result, trace = capture(build, hv, mode, workdir)
            lines = dump(build, trace)
            names = record_names(lines)
            machine.expect("lost_records" not in names, f"{mode}: records were lost", result)
            forks = names.count("operation_begin")
            machine.expect(forks > 100 and forks == names.count("operation_end"),
                           f"{mode}: {forks} fork markers", result)
            if mode == "writable":
                machine.expect(names.count("ptwr_unhook") > 100, "writable: too few unhooks", result)
                check_unhooks_rehooked(lines, result)
            else:
                check_emulations_counted(lines, result)
            calls = [fields[3] for fields in map(str.split, lines) if len(fields) > 3 and fields[2] == "hypercall"]
            refused = [op for op in calls if op in ("3f", "64")]
            machine.expect(sorted(refused) == ["3f", "64"], f"{mode}: refused hypercalls recorded: {refused}", result)
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
