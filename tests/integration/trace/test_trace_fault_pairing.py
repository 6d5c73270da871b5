"""xenalyze pairs a fault only with what resolved it, on a trace captured now from our hypervisor
(dom0 `trace=capture` running the fork benchmark, build/bin/xentrace), in both PTE-write modes.

Read from the records themselves (xenalyze --dump-all) and from the counters the hypervisor
prints, independently of the analyser's pairing:

- every emulation (writable pagetables: every unhook and inactive detach) directly follows the
  PTE_WRITE_FAULT that names its address (table), and xenalyze pairs exactly those;
- the faults bounced to the guest are the TRC_PV_PAGE_FAULT records, none of them paired, and no
  more than the hypervisor's bounced_exceptions;
- the hypervisor's page-fault count over the capture (pv_page_faults, printed by dom0 when the
  capture starts and stops) is the faults taken over plus those bounced, less those that were
  both (taken over, then refused): exactly under ptwr=emulate; under ptwr=writable a fault may
  also be a touch of an unhooked range, reattached without a fault record (it leaves a rehook),
  so the count lies between that sum and the sum plus the rehooks;
- the emulations equal the hypervisor's count of emulated writes over the capture, the unhooks
  its count of unhooks.
"""
import json
import os
import re
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import guest_boot  # noqa: E402
import machine  # noqa: E402
from trace_capture_run import capture, dump  # noqa: E402

WORKLOAD = "/bench -- --only fork_exit,fork_execve,dirty1_fork_exit --iterations 2 --warmup 0"

FAULT = re.compile(r" pte_write_fault rip ([0-9a-f]+) addr ([0-9a-f]+) table mfn ([0-9a-f]+)$")
EMULATION = re.compile(r" ptwr l1e [0-9a-f]+ addr ([0-9a-f]+) eip [0-9a-f]+$")
BOUNCED = re.compile(r" page_fault eip [0-9a-f]+ addr ([0-9a-f]+) ec [0-9a-f]+$")
UNHOOK = re.compile(r" ptwr_unhook l1 mfn ([0-9a-f]+) l2 slot \d+$")
DETACH = re.compile(r" ptwr_detach_inactive 0x14003 \[ ([0-9a-f]+) ([0-9a-f]+) \]$")
REHOOK = re.compile(r" ptwr_rehook l1 mfn ")


def counters(serial, when):
    line = re.search(rf"^trace: {when} at (.*)$", serial, re.M)
    return {k: int(v) for k, v in re.findall(r"(\w+)=(\d+)", line.group(1))} if line else None


def summary_counter(serial, name):
    m = re.search(rf"^\(XEN\)\s+{name}\s+(\d+)\s*$", serial, re.M)
    return int(m.group(1)) if m else None


def read_records(lines):
    """What the records say, the rule applied by hand: a resolution names the fault just before
    it on the CPU (one CPU here) by address or table."""
    seen = {"faults": 0, "bounced": 0, "emulations": 0, "unhooks": 0, "detaches": 0, "rehooks": 0,
            "emulated": 0, "unhooked": 0, "detached": 0, "refused": 0}
    open_fault = None
    for line in lines:
        if m := FAULT.search(line):
            seen["faults"] += 1
            open_fault = (m.group(2), m.group(3))
        elif m := EMULATION.search(line):
            seen["emulations"] += 1
            if open_fault and open_fault[0] == m.group(1):
                seen["emulated"] += 1
                open_fault = None
        elif m := UNHOOK.search(line):
            seen["unhooks"] += 1
            if open_fault and int(open_fault[1], 16) == int(m.group(1), 16):
                seen["unhooked"] += 1
                open_fault = None
        elif m := DETACH.search(line):
            seen["detaches"] += 1
            if open_fault and int(open_fault[1], 16) == int(m.group(2), 16) << 32 | int(m.group(1), 16):
                seen["detached"] += 1
                open_fault = None
        elif m := BOUNCED.search(line):
            seen["bounced"] += 1
            if open_fault and open_fault[0] == m.group(1):
                seen["refused"] += 1
                open_fault = None
        elif REHOOK.search(line):
            seen["rehooks"] += 1
    return seen


def check(build, mode, result, trace):
    lines = dump(build, trace)
    names = [line.split()[2] for line in lines if len(line.split()) > 2]
    machine.expect("lost_records" not in names, f"{mode}: records were lost", result)
    seen = read_records(lines)
    doc = json.loads(subprocess.run([os.path.join(build, "bin", "xenalyze"), "--json", trace],
                                    capture_output=True, text=True, check=True).stdout)
    pvmmu = doc["pvmmu"]
    faults = pvmmu["pte_write_faults"]
    pairs = pvmmu["pairs"]
    said = {"faults": faults["count"], "emulated": faults["emulated"], "unhooked": faults["unhooked"],
            "detached": faults["detached_inactive"], "refused": faults["bounced"],
            "bounced": pvmmu["faults_bounced"]}
    for key, value in said.items():
        machine.expect(value == seen[key], f"{mode}: xenalyze says {key} {value}, the records {seen[key]}", result)
    for pair, key in (("fault_to_emulation", "emulations"), ("fault_to_unhook", "unhooks"),
                      ("fault_to_detach_inactive", "detaches")):
        machine.expect(pairs[pair]["cost"]["events"] + pairs[pair]["unmatched"] == seen[key],
                       f"{mode}: {pair} pairs and unmatched do not add up to the {key}", result)
        # Our hypervisor writes a fault record before every resolution: nothing is unmatched.
        machine.expect(pairs[pair]["unmatched"] == 0, f"{mode}: {pair}: {pairs[pair]['unmatched']} unmatched",
                       result)

    start, stop = counters(result.serial, "started"), counters(result.serial, "stopped")
    machine.expect(start and stop and "page_faults" in stop, f"{mode}: no counters from dom0", result)
    delta = {k: stop[k] - start[k] for k in stop}
    recorded = seen["faults"] + seen["bounced"] - seen["refused"]
    if mode == "emulate":
        machine.expect(delta["page_faults"] == recorded,
                       f"emulate: the hypervisor took {delta['page_faults']} faults, the trace says {recorded} "
                       f"({seen['faults']} taken over + {seen['bounced']} bounced - {seen['refused']} both)", result)
        machine.expect(seen["emulations"] == delta["emulations"] == seen["emulated"] and seen["emulated"] > 50,
                       f"emulate: {seen['emulations']} emulation records, {seen['emulated']} paired, the "
                       f"hypervisor emulated {delta['emulations']}", result)
    else:
        machine.expect(recorded <= delta["page_faults"] <= recorded + seen["rehooks"],
                       f"writable: the hypervisor took {delta['page_faults']} faults, the trace records "
                       f"{recorded} and {seen['rehooks']} rehooks", result)
        machine.expect(seen["unhooks"] == delta["unhooks"] == seen["unhooked"] and seen["unhooked"] > 5,
                       f"writable: {seen['unhooks']} unhooks, {seen['unhooked']} paired, the hypervisor "
                       f"unhooked {delta['unhooks']}", result)
        machine.expect(seen["detaches"] == seen["detached"], f"writable: detaches {seen}", result)
    bounced_exceptions = summary_counter(result.serial, "bounced_exceptions")
    machine.expect(bounced_exceptions is not None and 0 < seen["bounced"] <= bounced_exceptions,
                   f"{mode}: {seen['bounced']} bounced faults traced, the hypervisor bounced "
                   f"{bounced_exceptions} exceptions in all", result)
    stats = subprocess.run([os.path.join(build, "bin", "xenalyze"), "--stats", trace],
                           capture_output=True, text=True, check=True).stdout
    machine.expect(f"bounced to the guest (TRC_PV_PAGE_FAULT): {seen['bounced']}" in stats,
                   f"{mode}: --stats does not report the bounced faults:\n{stats}", result)
    print(f"ok: ptwr={mode}: {seen['faults']} faults taken over ({seen['emulated']} emulated, {seen['unhooked']} "
          f"unhooked, {seen['detached']} detached, {seen['refused']} refused), {seen['bounced']} bounced, "
          f"{delta['page_faults']} counted by the hypervisor")


def main():
    build, _ = guest_boot.arguments()
    hv = guest_boot.hypervisor(build, "ours")
    with tempfile.TemporaryDirectory() as workdir:
        for mode in ("emulate", "writable"):
            result, trace = capture(build, hv, mode, workdir, init=WORKLOAD, passed="bench done")
            check(build, mode, result, trace)


if __name__ == "__main__":
    main()
