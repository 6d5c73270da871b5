"""Debian's Linux PV kernel with several vCPUs (issue 30, item 11): a boot-module domU on ours
with `domU_max_vcpus=4` on a 4-CPU machine (QEMU -smp 4), ptwr=emulate here: with `sched_smp=1`
(guests on every CPU) under `-icount shift=0`, and with `sched_smp=0` (every vCPU on CPU 0) under
multi-threaded TCG. Writable and adaptive (sched_smp=1) in test_linux_smp_writable.py and
test_linux_smp_adaptive.py, Xen 4.17 (`xl create` with vcpus=4 on a 4-CPU machine) in
test_linux_smp_on_xen417.py, each through check() below.

Why -icount with sched_smp=1: under multi-threaded TCG on a loaded two-core host the same boot
stalled in three runs of four (linux/README.md, "Several vCPUs"): once bringing up vCPU 3, once
every CPU of ours waiting for the hypervisor lock or idle, once Linux's vCPUs starved for 26 s
(soft lockups, an RCU stall); -icount runs the four CPUs round robin on one host thread, as test_sched_smp does.

Linux finds its vCPUs (VCPUOP_is_up), starts vCPUs 1..3 itself (VCPUOP_initialise / up, per-vCPU
vcpu_info, runstate, singleshot timers, VIRQ_TIMER and IPI ports) and brings them online; /init
(linux/initramfs.py, linux_init=smp) prints `linux-init: 4 CPUs online` from
/sys/devices/system/cpu/online, runs one fork loop per CPU at once, each pinned to its CPU, and
reports each loop's end, then the ordinary loop. Asserted: the CPU count (a vCPU that does not
come up fails here, and leaves a loop unstarted), every loop's end with status 0 and both its
benchmarks, `/init done`, and on ours every milestone to d1's poweroff, where its vCPUs ran
(on CPUs besides 0 with sched_smp=1, on CPU 0 alone with sched_smp=0) and `audit: clean`.
"""
import os
import re
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import guest_boot  # noqa: E402
import machine  # noqa: E402
from linux_guest import linux_run  # noqa: E402

ITERATIONS = 2
CPUS = 4


def expect_smp(result, vcpus, iterations):
    """The CPUs online and each parallel loop's end, as /init reports them (linux/initramfs.py)."""
    serial = result.serial
    online = re.findall(r"linux-init: (\d+) CPUs online", serial)
    machine.expect(online == [str(vcpus)], f"Linux did not report {vcpus} CPUs online (it said: {online})",
                   result)
    machine.expect(f"linux-init: {vcpus} parallel fork loops started" in serial,
                   f"/init did not start {vcpus} parallel fork loops", result)
    for cpu in range(vcpus):
        machine.expect(f"linux-init: loop {cpu} done, status 0, 2 benchmarks, pinned to CPU {cpu}" in serial,
                       f"the fork loop on CPU {cpu} did not run its {iterations} iterations of both "
                       "benchmarks to the end", result)
    machine.expect("linux-init: done, status 0" in serial, "/init did not reach its end", result)


def check(hypervisor, mode="", smp=CPUS, vcpus=CPUS, sched_smp=1, expected=None, timeout=420, deterministic=None):
    """Boots Linux with `vcpus` vCPUs on an `smp`-CPU machine (ours: ptwr=`mode`, sched_smp=,
    under -icount when `deterministic`, by default with sched_smp=1); expects `expected` CPUs
    online (default `vcpus`). Returns the boot."""
    build, _ = guest_boot.arguments()
    expected = vcpus if expected is None else expected
    if hypervisor == "xen417":
        result = linux_run.boot(build, "xen417", ITERATIONS, timeout=timeout, role="domu", linux_init="smp",
                                smp=smp, vcpus=vcpus)
        label = "through xl create on Xen 4.17"
        machine.expect(not result.timed_out, f"Linux {label} did not reach the end of /init", result)
        expect_smp(result, expected, ITERATIONS)
        reached, missing = linux_run.milestones(result.serial, None)
        machine.expect(not missing, f"Linux {label} stopped after '{reached[-1] if reached else 'none'}'", result)
        ok, lines = linux_run.summary(f"xen417 (xl, vcpus={vcpus}, -smp {smp})", result, None)
        machine.expect(ok, "the fork loop did not run: " + "; ".join(lines), result)
    else:
        deterministic = bool(sched_smp) if deterministic is None else deterministic
        result = linux_run.boot(build, "ours", ITERATIONS, deterministic, timeout=timeout, ptwr=mode, until=None,
                                role="domu", linux_init="smp", smp=smp, vcpus=vcpus, sched_smp=sched_smp)
        label = (f"as a boot-module domU on ours, ptwr={mode}, vcpus={vcpus}, -smp {smp}, sched_smp={sched_smp}"
                 + (", -icount" if deterministic else ""))
        machine.expect(re.search(r"^\(XEN\) d1: linux 2\.6, 256 MiB, ", result.serial, re.M) is not None,
                       "the hypervisor did not build Linux as d1 with 256 MiB", result)
        expect_smp(result, expected, ITERATIONS)
        lines = linux_run.expect_whole_boot(result, label, ITERATIONS, linux_run.DOMU_ID)
        # Printed with sched_smp=1 only (xen/summary.cpp); with 0 every vCPU runs on CPU 0.
        ran_on = re.search(r"^\(XEN\) Domain 1 vCPUs ran on: (.*)$", result.serial, re.M)
        if sched_smp and smp > 1:
            machine.expect(ran_on is not None, "no report of where domain 1's vCPUs ran", result)
            cpus = set(re.findall(r"\d+", re.sub(r"v\d+ ", " ", ran_on.group(1))))
            machine.expect(cpus - {"0"}, f"sched_smp=1: Linux's vCPUs ran on CPU 0 only ({ran_on.group(1)})", result)
            lines.append(f"  domain 1's vCPUs ran on: {ran_on.group(1)}")
            # Writable pagetables on several CPUs (xen/summary.cpp): inactive detaches only.
            shared = re.search(r"^\(XEN\) Domain 1 writable pagetables on several CPUs: (.*)$", result.serial, re.M)
            if mode in ("writable", "adaptive") and vcpus > 1:
                machine.expect(shared is not None, "no count of domain 1's detaches on several CPUs", result)
                lines.append(f"  domain 1's writable pagetables on several CPUs: {shared.group(1)}")
        else:
            machine.expect(ran_on is None, f"sched_smp=0: where domain 1's vCPUs ran was reported: {ran_on}", result)
    print("\n".join(lines))
    print(f"ok: Debian's Linux {label}: {expected} CPUs online, {expected} parallel fork loops to their end"
          f"{'' if hypervisor == 'xen417' else ', audit clean'} ({result.seconds:.0f} s)")
    return result


if __name__ == "__main__":
    check("ours", "emulate")
    check("ours", "emulate", sched_smp=0)
