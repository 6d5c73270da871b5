"""The physical CPUs and vCPU affinity from dom0 (issue 30, items 2 and 3, "Bad input"), on ours
and on Xen 4.17 with the same checks (guest/selftest/control/selftest_cpuinfo.cpp): physinfo's
CPU fields, XEN_SYSCTL_cputopoinfo (null handle, short and long buffers, a bad one),
XEN_SYSCTL_getcpuinfo (idle times that grow, nr_cpu_ids entries at most, bad buffers), and
XEN_DOMCTL_setvcpuaffinity / getvcpuaffinity on dom0's vCPUs with Xen's answers to bad input
(vCPU ids, flags, null handles, masks without an online CPU, bitmap sizes, bad bitmaps, vCPUs
not made yet), at -smp 1, -smp 4 and -smp 4 maxcpus=2. At -smp N both report what QEMU's default topology is
(one socket of N cores, one thread each): nr_cpus N, max_cpu_id N-1, threads_per_core 1,
cores_per_socket N, one node; with maxcpus=2 at -smp 4 both count the two CPUs left down in
max_cpu_id and cputopoinfo (with their places) but not in nr_cpus, dom0's hard mask is the online
CPUs and its soft one every CPU listed.
"""
import os
import re
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import guest_boot  # noqa: E402
import machine  # noqa: E402


def noted(result, what):
    found = re.findall(rf"selftest cpuinfo: {re.escape(what)}: (-?\d+) ", result.serial)
    machine.expect(len(found) == 1, f"expected one '{what}' note, got {found}", result)
    return int(found[0])


# What both report (Xen 4.17's figures, ours the same): the notes of selftest=cpuinfo per machine.
CASES = [
    (1, "", {"physinfo nr_cpus": 1, "physinfo max_cpu_id": 0, "physinfo threads_per_core": 1,
             "physinfo cores_per_socket": 1, "physinfo nr_nodes": 1, "cputopoinfo count": 1,
             "dom0's default hard mask": 0x1, "dom0's default soft mask": 0x1}),
    (4, "", {"physinfo nr_cpus": 4, "physinfo max_cpu_id": 3, "physinfo threads_per_core": 1,
             "physinfo cores_per_socket": 4, "physinfo nr_nodes": 1, "cputopoinfo count": 4,
             "cputopoinfo core of the last CPU": 3, "dom0's default hard mask": 0xf, "dom0's default soft mask": 0xf}),
    # maxcpus=2 leaves CPUs 2 and 3 down: counted in max_cpu_id and cputopoinfo (with their places), not
    # in nr_cpus or the topology counts; dom0's hard mask the online CPUs, its soft mask all four.
    (4, "maxcpus=2", {"physinfo nr_cpus": 2, "physinfo max_cpu_id": 3, "physinfo threads_per_core": 1,
                      "physinfo cores_per_socket": 2, "physinfo nr_nodes": 1, "cputopoinfo count": 4,
                      "cputopoinfo core of the last CPU": 1, "dom0's default hard mask": 0x3,
                      "dom0's default soft mask": 0xf}),
]


def main():
    build, hv = guest_boot.arguments()
    for smp, args, expected in CASES:
        result = guest_boot.boot_guest(build, hv, "selftest=cpuinfo", hv.poweroff, smp=smp, hypervisor_args=args,
                                       timeout=300)
        guest_boot.expect_ended(result, hv, hv.poweroff, 0)
        checks = guest_boot.check_selftest(result, "cpuinfo", 60)
        facts = {what: noted(result, what) for what in expected}
        machine.expect(facts == expected, f"-smp {smp} {args}: {facts}, expected {expected}", result)
        if args == "maxcpus=2":
            offline = re.findall(r"selftest cpuinfo: cputopoinfo offline CPU (\w+): (\d+) ", result.serial)
            want = [("core", "2"), ("socket", "0"), ("node", "0"), ("core", "3"), ("socket", "0"), ("node", "0")]
            machine.expect(offline == want, f"the CPUs left down: {offline}", result)
        machine.expect("init exited: status 0" in result.lines(), "init did not run after selftest=cpuinfo", result)
        print(f"ok: {hv.name}: -smp {smp} {args}: selftest=cpuinfo, {checks} checks, physinfo "
              f"{facts['physinfo nr_cpus']} CPUs of {facts['physinfo max_cpu_id'] + 1} "
              f"({result.seconds:.1f} s)")


if __name__ == "__main__":
    main()
