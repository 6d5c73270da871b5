"""Tracing per physical CPU (issue 30, item 10; ours): at -smp 4 with sched_smp=1, dom0 (four
vCPUs) runs selftest=vcpus-flush (its other vCPUs spin in the kernel on their CPUs while vCPU 0
makes 64 MMUEXT_TLB_FLUSH_ALL and 64 MMUEXT_INVLPG_ALL, each a flush IPI to the CPUs they hold),
then the fork test, while it captures the trace buffers (trace=capture: t_info and every CPU's buffer mapped,
each CPU's records sent as RECORDS frames with the CPU as channel; build/bin/xentrace writes
Xen's per-CPU framing). Checked on the trace:

- records come from every CPU, each in its own CPU's windows: the idle vCPU of CPU n (d32767vn)
  switches and changes runstate only on CPU n; dom0's vCPU v starts running (runstate -> 0,
  sched_switch to it) only on CPUs the hypervisor says v ran on ("Domain 0 vCPUs ran on");
- every CPU's records are in TSC order, and nothing was lost (no TRC_LOST_RECORDS);
- remote TLB flushes: at least the 128 of the selftest were sent, and every FLUSH_IPI_SEND's
  target CPUs each recorded a FLUSH_IPI_RECEIVE naming the sender, in their own buffers;
- our xenalyze reads it without errors; Xen 4.17's own xenalyze (build/deps/xen-4.17/xenalyze,
  where built) activates the four pCPUs, dumps as many records and puts each one on the CPU ours
  does.

Then the same capture on Xen 4.17 at -smp 4 (its xentrace's t_info and per-CPU buffers, pages
not contiguous; /hello instead of the fork test, which traced there outlasts any timeout):
records from every CPU, the idle vCPUs on their own CPUs, none lost, both xenalyzes agree.
"""
import collections
import os
import re
import struct
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import guest_boot  # noqa: E402
import machine  # noqa: E402
from trace_capture_run import capture  # noqa: E402

CPUS = 4
IDLE = 32767
CPU_CHANGE, WRAP = 0x0001f003, 0x0001f002
DOM0_MARKERS = (0x00014008, 0x00014009, 0x0001400b)
OUR_LINE = re.compile(r"^\s*(\d+)\.(\d+) cpu(\d+) (.*)$")
# Xen's xenalyze marks each record's CPU with an x in a column per pCPU, a space for one not
# activated yet ("|| x": CPU 3's record before CPU 2's first): the marker follows the time and
# one space, spaces included.
XEN_LINE = re.compile(r"^(?:\]|\s)\s*(?:\d+\.\d+ )?([-x.| ]*x[-x.| ]*) d(?:\d+|\?)v(?:\d+|\?) ")


def our_records(build, trace, result):
    run = subprocess.run([os.path.join(build, "bin", "xenalyze"), "--dump-all", trace], capture_output=True,
                         text=True, timeout=600)
    machine.expect(run.returncode == 0, f"xenalyze --dump-all: {run.returncode} {run.stderr[-2000:]}", result)
    errors = [line for line in run.stderr.splitlines() if line.startswith("error")]
    machine.expect(not errors, f"our xenalyze found errors: {errors[:5]}", result)

    records = []
    for line in run.stdout.splitlines():
        m = OUR_LINE.match(line)
        if m:
            records.append((int(m.group(1)) * 10**9 + int(m.group(2)), int(m.group(3)), m.group(4)))
    return records


def check_cpus(records, used, result):
    """used: the CPUs each of dom0's vCPUs ran on (None: unknown, Xen 4.17 does not say)."""
    per_cpu = collections.Counter(cpu for _, cpu, _ in records)
    machine.expect(sorted(per_cpu) == list(range(CPUS)), f"records by CPU: {dict(per_cpu)}", result)
    for ns, cpu, text in records:
        m = re.match(r"runstate_change d(\d+)v(\d+) (\d+)->(\d+)", text)
        if m:
            domain, vcpu, new = int(m.group(1)), int(m.group(2)), int(m.group(4))
            if domain == IDLE:
                machine.expect(vcpu == cpu, f"cpu{cpu} has a runstate record of the idle vCPU of CPU {vcpu}", result)
            elif domain == 0 and new == 0 and used is not None:
                machine.expect(cpu in used.get(vcpu, set()),
                               f"d0v{vcpu} started running on cpu{cpu}, not a CPU it ran on ({used})", result)
        m = re.match(r"sched_switch d(\d+)v(\d+) -> d(\d+)v(\d+)", text)
        if m:
            for domain, vcpu in ((int(m.group(1)), int(m.group(2))), (int(m.group(3)), int(m.group(4)))):
                if domain == IDLE:
                    machine.expect(vcpu == cpu, f"cpu{cpu}: {text}", result)
            if int(m.group(3)) == 0 and used is not None:
                machine.expect(cpu in used.get(int(m.group(4)), set()), f"cpu{cpu}: {text} ({used})", result)
    lost = [text for _, _, text in records if text.startswith("lost_records")]
    machine.expect(not lost, f"records were lost: {lost[:3]}", result)
    return per_cpu


def check_file_order(trace, result):
    """The file read as Xen's xentrace writes it: TRC_TRACE_CPU_CHANGE (cpu, bytes) then that
    many bytes of one CPU's records. Each CPU's hypervisor records are in TSC order (its ring's
    order); dom0's own markers (OPERATION_BEGIN/END, CAPTURE_DRAIN) travel in CPU 0's windows,
    stamped on whichever CPU dom0 ran, so they are left out. Returns the windows per CPU."""
    data = open(trace, "rb").read()
    at, windows, last = 0, collections.Counter(), {}
    while at + 12 <= len(data):
        header, cpu, size = struct.unpack_from("<III", data, at)
        machine.expect(header & 0x0fffffff == CPU_CHANGE and (header >> 28) & 7 == 2 and not header >> 31,
                       f"no CPU change record at offset {at:#x}: {header:#x}", result)
        machine.expect(cpu < CPUS and at + 12 + size <= len(data), f"window at {at:#x}: cpu {cpu}, {size} bytes",
                       result)
        windows[cpu] += 1
        at += 12
        end = at + size
        while at < end:
            word, = struct.unpack_from("<I", data, at)
            event, extra, has_tsc = word & 0x0fffffff, (word >> 28) & 7, word >> 31
            if has_tsc and event not in (WRAP, *DOM0_MARKERS):
                tsc, = struct.unpack_from("<Q", data, at + 4)
                machine.expect(tsc >= last.get(cpu, 0), f"cpu{cpu}: TSC goes back at {at:#x} ({event:#x})", result)
                last[cpu] = tsc
            at += 4 + 8 * has_tsc + 4 * extra
        machine.expect(at == end, f"a record crosses the end of a window at {end:#x}", result)
    machine.expect(at == len(data), f"{len(data) - at} bytes after the last window", result)
    return windows


def check_flushes(records, result):
    """Each FLUSH_IPI_SEND's targets each have a FLUSH_IPI_RECEIVE from its sender."""
    expected = collections.Counter()  # (sender, target) -> sends
    received = collections.Counter()
    for _, cpu, text in records:
        m = re.match(r"flush_ipi_send cpus (0x[0-9a-f]+|0)", text)
        if m:
            mask = int(m.group(1), 16)
            machine.expect(not mask & (1 << cpu), f"cpu{cpu} asked itself: {text}", result)
            for target in range(CPUS):
                if mask & (1 << target):
                    expected[(cpu, target)] += 1
        m = re.match(r"flush_ipi_receive from cpu(\d+)", text)
        if m:
            received[(int(m.group(1)), cpu)] += 1
    # Tracing was switched on and off while the CPUs ran: one flush on each edge may have its
    # send or its receives outside the capture. Nothing else may differ.
    for pair in set(expected) | set(received):
        machine.expect(abs(expected[pair] - received[pair]) <= 1,
                       f"flushes from cpu{pair[0]} to cpu{pair[1]}: {expected[pair]} sent, {received[pair]} received",
                       result)
    return sum(expected.values()), sum(received.values())


def check_xen_xenalyze(build, trace, records, result):
    theirs = os.path.join(build, "deps", "xen-4.17", "xenalyze")
    if not os.path.exists(theirs):
        return "Xen's xenalyze not built"
    summary = subprocess.run([theirs, "--summary", trace], capture_output=True, text=True, timeout=600)
    machine.expect(summary.returncode == 0 and "|-- Domain 0 --|" in summary.stdout,
                   f"Xen's xenalyze --summary: {summary.returncode} {summary.stderr[-2000:]}", result)
    dump = subprocess.run([theirs, "--dump-all", trace], capture_output=True, text=True, timeout=600)
    machine.expect(dump.returncode == 0, f"Xen's xenalyze --dump-all: {dump.stderr[-2000:]}", result)
    active = sorted(int(n) for n in re.findall(r"Activating pcpu (\d+)", dump.stdout + dump.stderr))
    machine.expect(active == list(range(CPUS)), f"Xen's xenalyze activated pcpus {active}", result)
    theirs_cpus = []
    for line in dump.stdout.splitlines():
        m = XEN_LINE.match(line)
        if m:
            marker = m.group(1)
            machine.expect(marker.count("x") == 1, f"Xen's xenalyze line without one CPU: {line}", result)
            theirs_cpus.append(marker.index("x"))
    if len(theirs_cpus) != len(records):
        unmatched = [line for line in dump.stdout.splitlines() if not XEN_LINE.match(line)]
        machine.expect(False, f"Xen's xenalyze dumped {len(theirs_cpus)} records by CPU "
                       f"{collections.Counter(theirs_cpus)}, ours {len(records)} by CPU "
                       f"{collections.Counter(cpu for _, cpu, _ in records)}; its other lines: {unmatched[:30]}",
                       result)
    machine.expect(collections.Counter(theirs_cpus) == collections.Counter(cpu for _, cpu, _ in records),
                   f"Xen's xenalyze puts records on CPUs {collections.Counter(theirs_cpus)}", result)
    return "Xen's xenalyze agrees on every record's CPU"


def main():
    build, _ = guest_boot.arguments()
    hv = guest_boot.hypervisor(build, "ours")
    with tempfile.TemporaryDirectory() as workdir:
        result, trace = capture(build, hv, "emulate", workdir, smp=CPUS, hypervisor_args="sched_smp=1",
                                kernel_args="selftest=vcpus-flush", timeout=600)
        machine.expect(f"Scheduling guests on {CPUS} CPUs" in result.serial, "the APs did not join the scheduler",
                       result)
        guest_boot.check_selftest(result, "vcpus-flush", 7)
        used = guest_boot.cpus_used(result, 0)
        machine.expect(len(set().union(*used.values())) > 1, f"dom0's vCPUs ran on one CPU: {used}", result)
        records = our_records(build, trace, result)
        per_cpu = check_cpus(records, used, result)
        windows = check_file_order(trace, result)
        sent, received = check_flushes(records, result)
        machine.expect(sent >= 128 * (CPUS - 1) // 2, f"only {sent} flush IPI targets recorded", result)
        xen = check_xen_xenalyze(build, trace, records, result)
        print(f"ok: ours -smp {CPUS} sched_smp=1: {len(records)} records by CPU {dict(sorted(per_cpu.items()))} "
              f"in windows {dict(sorted(windows.items()))}, "
              f"none lost, each on its CPU (dom0's vCPUs ran on {used}); flush IPIs: {sent} targets asked, "
              f"{received} flushes recorded; {xen}")
        check_xen417(build, workdir)


def check_xen417(build, workdir):
    """dom0's capture of Xen 4.17's buffers at -smp 4 (dom0 has a vCPU per CPU there)."""
    hv = guest_boot.hypervisor(build, "xen417")
    if not os.path.exists(hv.image):
        print(f"skipped on Xen 4.17: {hv.image} not built")
        return
    workdir = os.path.join(workdir, "xen417")
    os.makedirs(workdir)
    result, trace = capture(build, hv, "emulate", workdir, init="/hello", passed="Hello world", smp=CPUS,
                            kernel_args="selftest=vcpus-flush", timeout=400)
    guest_boot.check_selftest(result, "vcpus-flush", 7)
    records = our_records(build, trace, result)
    per_cpu = check_cpus(records, None, result)
    windows = check_file_order(trace, result)
    xen = check_xen_xenalyze(build, trace, records, result)
    print(f"ok: Xen 4.17 -smp {CPUS}: {len(records)} records by CPU {dict(sorted(per_cpu.items()))} "
          f"in windows {dict(sorted(windows.items()))}, none lost, each on its CPU; {xen}")


if __name__ == "__main__":
    main()
