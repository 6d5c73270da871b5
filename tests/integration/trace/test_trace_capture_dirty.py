"""Live trace capture of the heaviest member of the fork suite: dirty 64 MB, fork, exit, then
unmap the 64 MB. The unmap alone makes more records than the default trace buffer (2 MiB)
holds (a PTE write and an invlpg per page; in writable mode an unhook and a rehook too)
inside a single system call, so dom0 must drain while the kernel loops, not only when it
leaves the kernel. Checked in both PTE-write modes:

- no records were lost at the default buffer size;
- every unhook is rehooked before any other flush (writable);
- every emulated write has its record (emulate);
- the PTE-write benchmark's emulations are all recorded too (it runs last).
"""
import os
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import guest_boot  # noqa: E402
import machine  # noqa: E402
from trace_capture_run import (capture, check_emulations_counted, check_unhooks_rehooked,  # noqa: E402
                               dump, record_names)

WORKLOAD = "/bench -- --only dirty64_fork_exit,pte_write --iterations 1 --warmup 0 --pte-writes 20000"


def main():
    build, _ = guest_boot.arguments()
    hv = guest_boot.hypervisor(build, "ours")
    with tempfile.TemporaryDirectory() as workdir:
        for mode in ("writable", "emulate"):
            result, trace = capture(build, hv, mode, workdir, init=WORKLOAD, passed="bench done",
                                    timeout=280)
            lines = dump(build, trace)
            names = record_names(lines)
            machine.expect("lost_records" not in names, f"{mode}: records were lost", result)
            machine.expect(names.count("operation_begin") == 1, f"{mode}: expected one fork", result)
            if mode == "writable":
                machine.expect(names.count("ptwr_unhook") > 10000,
                               f"writable: {names.count('ptwr_unhook')} unhooks, expected one per page",
                               result)
                check_unhooks_rehooked(lines, result)
            else:
                check_emulations_counted(lines, result)
            print(f"ok: ptwr={mode}: {len(lines)} records, none lost")


if __name__ == "__main__":
    main()
