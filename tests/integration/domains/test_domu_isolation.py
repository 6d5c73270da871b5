"""Several domains on one CPU: dom0 and an unprivileged domain built at boot (the extra
multiboot modules of docs/architecture.md, "Domains built at boot") share the CPU under the
round-robin scheduler, and the domU is refused what only a privileged domain may do.

The domU runs the guest's selftest=unprivileged (guest/selftest/control/selftest_unprivileged.cpp, whose
expected values are Xen 4.17's): sysctl tbuf_op (get_info, enable) and perfc_op -> -EPERM; a
stale sysctl interface version -> -EACCES first; PHYSDEVOP_set_iopl accepted but port reads
give all ones; mmu_update on behalf of dom0 (foreigndom) -> -EPERM, of no domain -> -ESRCH;
mmu_update mapping a frame of dom0 -> -EBUSY, a frame beyond RAM -> -EPERM.
Both domains run selftest=fpu (their own SSE/x87 values must survive sleeping while the other
runs), then the fork test to completion, interleaved by time slices; the machine
ends by itself when both are gone, with a clean frame audit and dom0's reason as exit value.

A second boot (writable pagetables, direct PTE writes in both domains, dom0 capturing a
trace) checks Xen's scheduler records: TRC_SCHED_SWITCH between d0v0 and d1v0 in both
directions, and runstate changes of both including preemption (running -> runnable). The
idle vCPU (d32767) is checked by test_trace_capture, where dom0 alone blocks. Real Xen 4.17 builds no domU at boot on x86, so this test
runs on ours only.

A third boot crashes the domU (selftest=fault): dom0 runs on to its end, and the machine
still ends with dom0's reason. A fourth gives a domU module that is no kernel: it is refused
with a message and dom0 runs alone.
"""
import os
import re
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import guest_boot  # noqa: E402
import machine  # noqa: E402
from two_domains import HYPERVISOR_ARGS, boot_two, counter  # noqa: E402

def dom0_frames(serial):
    """dom0's machine frames, as its builder reported them."""
    m = re.search(r"d0: privileged, memory mfns ([0-9a-f]+)-([0-9a-f]+), shared_info mfn ([0-9a-f]+)", serial)
    if not m:
        return set(), None
    first, last, shared = (int(g, 16) for g in m.groups())
    return range(first, last + 1), shared


def check_isolation(result):
    lines = result.lines()
    checks = [l for l in lines if l.startswith("(d1) selftest unprivileged: ")]
    failures = [l for l in checks if ": FAIL" in l]
    machine.expect(not failures, "; ".join(failures), result)
    machine.expect("(d1) selftest unprivileged: passed" in result.serial, "no 'passed' line from the domU", result)
    machine.expect(len(checks) >= 14, f"only {len(checks)} selftest lines", result)
    machine.expect(not any(l.startswith("selftest unprivileged") for l in lines),
                   "the unprivileged selftest ran in dom0", result)
    m = re.search(r"\(d1\) selftest unprivileged: foreign mfn .*: (\d+) ", result.serial)
    memory, shared_info = dom0_frames(result.serial)
    machine.expect(m is not None and (int(m.group(1)) in memory or int(m.group(1)) == shared_info),
                   f"the refused frame {m and m.group(1)} is not dom0's ({memory}, {shared_info})", result)


def check_fpu_isolation(result):
    """Both domains ran selftest=fpu at about the same time: each kept its own FPU state."""
    for prefix in ("", "(d1) "):
        lines = [l for l in result.lines() if l.startswith(f"{prefix}selftest fpu: ")]
        machine.expect(f"{prefix}selftest fpu: passed" in lines and not any(": FAIL" in l for l in lines),
                       f"FPU state not kept: {lines}", result)


def check_completed(result):
    lines = result.lines()
    machine.expect("forktest: passed" in lines and "(d1) forktest: passed" in lines,
                   "a fork test did not pass", result)
    machine.expect(counter(result.serial, "sched_preempt") > 0, "no time slice ever ended", result)


def check_interleaved(result):
    """The two fork tests' outputs alternate: each domain printed while the other ran."""
    owners = [l.startswith("(d1) forktest: ") for l in result.lines()
              if l.startswith("forktest: ") or l.startswith("(d1) forktest: ")]
    alternations = sum(1 for a, b in zip(owners, owners[1:]) if a != b)
    machine.expect(alternations >= 4, f"fork test outputs alternate only {alternations} times", result)
    return alternations


def scheduler_records(build, trace):
    run = subprocess.run([os.path.join(build, "bin", "xenalyze"), "--dump-all", trace],
                         capture_output=True, text=True, check=True)
    switches, runstates = set(), set()
    for line in run.stdout.splitlines():
        if m := re.search(r"sched_switch d(\d+)v(\d+) -> d(\d+)v(\d+)", line):
            switches.add(tuple(int(g) for g in m.groups()))
        elif m := re.search(r"runstate_change (d\d+v\d+) (\d->\d)", line):
            runstates.add(m.groups())
    return switches, runstates


def check_trace(build, result, stream, workdir):
    trace = os.path.join(workdir, "two.trace")
    run = subprocess.run([os.path.join(build, "bin", "xentrace"), f"--input={stream}", trace],
                         capture_output=True, text=True)
    machine.expect(run.returncode == 0, f"xentrace failed: {run.stderr}", result)
    switches, runstates = scheduler_records(build, trace)
    for prev, nxt in (((0, 0), (1, 0)), ((1, 0), (0, 0))):
        machine.expect(prev + nxt in switches, f"no TRC_SCHED_SWITCH d{prev[0]}v{prev[1]} -> d{nxt[0]}v{nxt[1]}", result)
    for change in (("d1v0", "0->1"), ("d1v0", "1->0"), ("d0v0", "0->1"), ("d0v0", "1->0")):
        machine.expect(change in runstates, f"no runstate change {change[0]} {change[1]}", result)
    return len(switches)


def check_domu_crash_spares_dom0(build):
    """A domU that crashes (selftest=fault: no trap table, then a page fault) stops alone."""
    result = boot_two(build, "", "selftest=fault", "", domu_ending="Domain 1 crashed: reason crash")
    machine.expect("hypervisor still running after the crash of domain 1" in result.serial,
                   "no report of the domU's crash", result)
    machine.expect("init exited: status 0" in result.lines(), "dom0 did not run to its end", result)
    print(f"ok: a crashing domU left dom0 running to its end ({result.seconds:.1f} s)")


def check_bad_domu_kernel_spares_dom0(build):
    """A domU module that is no kernel (the initrd) is refused at build; dom0 boots alone."""
    hv = guest_boot.hypervisor(build, "ours")
    kernel = os.path.join(build, "guest", "kernel")
    initrd = os.path.join(build, "guest", "initrd.cpio")
    result = machine.boot(hv.image, HYPERVISOR_ARGS, [(kernel, ""), (initrd, ""), (initrd, "not a kernel")],
                          timeout=120, memory="512M")
    guest_boot.expect_ended(result, hv, "Domain 0 shut down: reason poweroff", 0)
    machine.expect("d1 kernel refused: " in result.serial and "d1 not built: no usable domU kernel" in result.serial,
                   "the bad domU kernel was not reported", result)
    machine.expect("Domain 1" not in result.serial, "a domain 1 ran", result)
    print(f"ok: a bad domU kernel was refused and dom0 ran alone ({result.seconds:.1f} s)")


def main():
    build, _ = guest_boot.arguments()
    result = boot_two(build, "selftest=fpu init=/forktest", "selftest=unprivileged+fpu init=/forktest", "")
    check_isolation(result)
    check_fpu_isolation(result)
    check_completed(result)
    alternations = check_interleaved(result)
    print(f"ok: domU refused privileged operations; each domain kept its FPU state; "
          f"both fork tests passed interleaved "
          f"({alternations} alternations of their output, {counter(result.serial, 'sched_ctx')} switches, {counter(result.serial, 'sched_preempt')} "
          f"preemptions, {result.seconds:.1f} s)")

    with tempfile.TemporaryDirectory() as workdir:
        stream = os.path.join(workdir, "two.stream")
        result = boot_two(build, "pte=direct trace=capture init=/forktest",
                          "selftest=unprivileged pte=direct init=/forktest", "ptwr=writable",
                          extra=("-serial", f"file:{stream}"))
        check_isolation(result)
        # dom0 streams its trace over a slow serial port: its output may all come at the end,
        # so interleaving is checked on the trace's switch records instead.
        check_completed(result)
        machine.expect("trace: capturing" in result.serial, "capture did not start", result)
        kinds = check_trace(build, result, stream, workdir)
        print(f"ok: ptwr=writable with two domains: audit clean, scheduler records traced "
              f"({kinds} distinct switches, {result.seconds:.1f} s)")

    check_domu_crash_spares_dom0(build)
    check_bad_domu_kernel_spares_dom0(build)


if __name__ == "__main__":
    main()
