"""Cross-CPU calls, the event check, the TLB-flush IPI and the flush clock's filter, and the
spinlock on every CPU (selftest=ipi); the lock-order checker (selftest=lock-order and
lock-recursion).

Once the CPUs are up, the boot CPU calls a function on each AP and on all CPUs at once (each
records its CPU number; a mask of all 64 CPU numbers reaches the online ones only), makes a
call it does not wait for, floods 10,000 calls (one CPU at a time and all at once, waited and
not), wakes each halted AP with the event check, flushes every CPU's TLB through the flush IPI
(each CPU's flush count and stamp must move), stamps a frame, has one CPU flush and asks the
flush filter who must still flush (all but that CPU, then none once they did), and has all
CPUs increment a shared counter under one lock, 2,000 times each, all at once: it must end
at exactly N x 2,000. Then dom0 boots and passes its self-test as ever.

Runs at -smp 4 with QEMU's multi-threaded TCG (the CPUs really run at once) and under -icount
(round robin on one thread, where each `pause` hands over to the next CPU), at -smp 2, and at
-smp 1 (every call runs on the caller). The test can fail: selftest=ipi-unlocked leaves the
counter's lock out, and the same checks must find the count short and nothing else wrong.
selftest=lock-order takes two locks against the order, lock-recursion one lock twice: the
panic names them."""
import os
import re
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import machine  # noqa: E402
import guest_boot  # noqa: E402

FLOOD = 10000
LOCK_ROUNDS = 2000
DONE = "(XEN) ipi: selftest done"


def flood_runs(cpus):
    """What the flood must run: every fourth call goes to all CPUs, the others to one."""
    return sum(cpus if i % 4 == 3 else 1 for i in range(FLOOD))


def cpu_list(cpus):
    return " ".join(str(c) for c in cpus) if cpus else "none"


def ipi_lines(result):
    return [line[len("(XEN) "):].rstrip("\r") for line in result.lines() if line.startswith("(XEN) ipi: ")]


def problems(said, smp, counter_lock=True):
    """What is wrong in selftest=ipi's lines at -smp `smp` (empty: all is right)."""
    wrong = []

    def expect_line(line):
        if line not in said:
            wrong.append(f"missing '{line}'")

    lock = "on" if counter_lock else "OFF (selftest=ipi-unlocked)"
    expect_line(f"ipi: selftest on {smp} CPUs, lock checks on, counter lock {lock}")
    every = list(range(smp))
    for cpu in range(1, smp):
        expect_line(f"ipi: call to CPU{cpu} ran on {cpu}")
    expect_line(f"ipi: waited call to all ran on {cpu_list(every)}")
    expect_line(f"ipi: call to CPUs 0-63 ran on {cpu_list(every)}")
    expect_line(f"ipi: non-waited call to {smp - 1} CPUs: all ran")
    runs = flood_runs(smp)
    expect_line(f"ipi: flood of {FLOOD} calls: {runs} of {runs} function runs")
    if smp == 1:
        expect_line("ipi: event check: no other CPU")
    for cpu in range(1, smp):
        expect_line(f"ipi: event check: CPU{cpu} woke from hlt")
    for cpu in range(smp):
        flush = [line for line in said if line.startswith(f"ipi: flush CPU{cpu}: ")]
        if len(flush) != 1 or not flush[0].startswith(f"ipi: flush CPU{cpu}: flushed ("):
            wrong.append(f"CPU{cpu} did not flush: {flush}")
    others = every[:-1]
    expect_line(f"ipi: flush filter: CPU{smp - 1} flushed since the stamp; to flush: {cpu_list(others)} "
                f"(expected {cpu_list(others)})")
    expect_line("ipi: flush filter once they flushed: to flush: none")
    total = smp * LOCK_ROUNDS
    count = [line for line in said if line.startswith("ipi: lock: ") and "increments" in line]
    if count != [f"ipi: lock: {smp} CPUs x {LOCK_ROUNDS} increments = {total} (expected {total})"]:
        wrong.append(f"the counter under the lock: {count}")
    expect_line("ipi: selftest done")
    return wrong


def boot_selftest(build, hv, selftest, smp, accel, extra, dom0):
    kernel = os.path.join(build, "guest", "kernel")
    initrd = os.path.join(build, "guest", "initrd.cpio")
    return machine.boot(hv.image, f"{hv.append} selftest={selftest}", [(kernel, "selftest=mmu"), (initrd, "")],
                        timeout=180, smp=smp, accel=accel, extra=extra, until=None if dom0 else DONE)


def took(said, phase):
    """The self-test's own timing of a phase ("ipi: flood: 12 ms")."""
    lines = [line for line in said if re.fullmatch(rf"ipi: {phase}: \d+ ms", line)]
    return lines[0][len(f"ipi: {phase}: "):] if lines else "?"


def check_ipi(build, hv, smp, label, accel="tcg", extra=()):
    result = boot_selftest(build, hv, "ipi", smp, accel, extra, dom0=True)
    machine.expect(f"(XEN) Brought up {smp} CPUs" in result.serial, f"{label}: not all {smp} CPUs came up", result)
    said = ipi_lines(result)
    wrong = problems(said, smp)
    machine.expect(not wrong, f"{label}: " + "; ".join(wrong) + f" (ipi lines: {said})", result)
    machine.expect("did not answer" not in result.serial, f"{label}: a CPU did not answer", result)
    guest_boot.expect_ended(result, hv, hv.poweroff, 0)
    guest_boot.check_selftest(result, "mmu", 8)
    print(f"ok: {label}: calls to each AP and to all, non-waited, {FLOOD} flooded ({flood_runs(smp)} runs, "
          f"{took(said, 'flood')}), event checks, flush IPIs and the filter on {smp} CPUs, lock counter "
          f"{smp * LOCK_ROUNDS} ({took(said, 'lock')}); dom0 passed ({result.seconds:.1f} s)")


def check_unlocked_is_caught(build, hv):
    """The counter without its lock, at -smp 4 under -icount (each `pause` between the read and
    the write hands over to another CPU, so three increments in four are lost every time): the
    checks must find the count short, and only that. Under multi-threaded TCG a missing lock is
    caught only in some runs (the host may run the CPUs' threads one after another)."""
    result = boot_selftest(build, hv, "ipi-unlocked", 4, "tcg", ("-icount", "shift=0"), dom0=False)
    machine.expect(not result.timed_out, "selftest=ipi-unlocked did not finish", result)
    said = ipi_lines(result)
    wrong = problems(said, 4, counter_lock=False)
    machine.expect(len(wrong) == 1 and wrong[0].startswith("the counter under the lock"),
                   f"selftest=ipi-unlocked: expected the count alone to be wrong, got {wrong}", result)
    count = re.search(r"increments = (\d+) \(expected (\d+)\)", wrong[0])
    machine.expect(count and int(count.group(1)) < int(count.group(2)), f"not short: {wrong[0]}", result)
    print(f"ok: selftest=ipi-unlocked: without the lock the counter ends at {count.group(1)} of {count.group(2)}, "
          "and the checks catch it")


def check_lock_panic(build, hv, selftest, expected):
    modules = [(os.path.join(build, "guest", "kernel"), ""), (os.path.join(build, "guest", "initrd.cpio"), "")]
    result = machine.boot(hv.image, f"{hv.append} selftest={selftest}", modules, timeout=60, until=expected, smp=2)
    machine.expect(not result.timed_out, f"selftest={selftest}: no panic", result)
    machine.expect(expected in result.serial, f"selftest={selftest}: the panic does not name the locks", result)
    machine.expect("lock-order: no violation reported" not in result.serial, "the violation went on", result)
    print(f"ok: selftest={selftest}: panics naming the locks")


def main():
    build, hv = guest_boot.arguments()
    machine.expect(hv.name == "ours", "ours only")
    check_ipi(build, hv, 4, "-smp 4, multi-threaded TCG", accel="tcg,thread=multi")
    check_ipi(build, hv, 4, "-smp 4, -icount", extra=("-icount", "shift=0"))
    check_ipi(build, hv, 2, "-smp 2, multi-threaded TCG", accel="tcg,thread=multi")
    check_ipi(build, hv, 1, "-smp 1")
    check_unlocked_is_caught(build, hv)
    check_lock_panic(build, hv, "lock-order",
                     "Panic: CPU0: lock order violated: 'selftest inner' (level domain) taken while holding "
                     "'selftest outer' (level selftest)")
    check_lock_panic(build, hv, "lock-recursion",
                     "Panic: CPU0: lock taken again by the CPU holding it: 'selftest outer' (level selftest)")


if __name__ == "__main__":
    main()
