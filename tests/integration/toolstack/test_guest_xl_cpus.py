"""xl's CPU commands on a four-CPU machine (issue 30, items 2, 3 and 12): `pvhvd --smp 4`
starts QEMU with -smp 4, on ours and on Xen 4.17 with the same checks.

- `xl info`: nr_cpus 4, max_cpu_id 3, nr_nodes 1, cores_per_socket 4, threads_per_core 1 (QEMU's
  default split, as Xen 4.17 reports it).
- `xl cpupool-list`: one pool, Pool-0, its 4 CPUs, the scheduler sysctl sched_id names
  (credit2), one domain (dom0); `-c` lists CPUs 0-3; an unknown pool is refused.
- `xl create -p` with vcpus=2 maxvcpus=4, cpus=["1", "2-3"] (a list: one per vCPU) and
  cpus_soft="all,^0": `xl vcpu-list` shows hard 1, 2-3, all, all and soft 1-3 on every vCPU.
- `xl vcpu-pin`: a vCPU's hard mask (vCPU 2 to CPU 0), every vCPU's soft mask with "-" for the
  hard one, dom0's vCPU 0 to CPU 1 and back to all: vcpu-list shows each change. Bad input as
  Xen's xl answers it: a vCPU beyond the domain's (the hypervisor's -EINVAL: "Could not set
  affinity for vcpu `7'."), a mask of CPUs the host does not have (empty: -EINVAL), a VCPU
  that is no number ("Error: Invalid argument x as VCPU."), a range xl cannot parse ("Invalid
  pcpu range: 1-x.").
- `xl vcpu-set` writes cpu/<i>/availability (3: online, online, online, offline); more vCPUs
  than the host's CPUs is refused without -i, more than the domain's maximum fails.
- `xl create` with cpus="5-6" (no CPU the host has) fails (the hypervisor's -EINVAL) and leaves
  no domain. The daemon ends cleanly; on ours the frame audit is clean. `pvhvd --smp` outside
  1..8 is a usage error (status 2).
"""
import os
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "lib"))
import guest_boot  # noqa: E402
import machine  # noqa: E402
import pvhvd_client  # noqa: E402
from test_guest_xl_ptwr_mode import Run  # noqa: E402
from test_guest_xl_vcpus import vcpu_rows  # noqa: E402


def affinities(run, name):
    return [r[6] for r in vcpu_rows(run, name)]


def info(run):
    fields = {}
    for line in run.ok("info").splitlines():
        key, _, value = line.partition(":")
        fields[key.strip()] = value.strip()
    want = {"nr_cpus": "4", "max_cpu_id": "3", "nr_nodes": "1", "cores_per_socket": "4", "threads_per_core": "1"}
    got = {k: fields.get(k) for k in want}
    machine.expect(got == want, f"xl info: {got}, expected {want}")


def cpupools(run):
    out = run.ok("cpupool-list")
    expected = ("Name               CPUs   Sched     Active   Domain count\n"
                "Pool-0               4   credit2       y          1\n")
    machine.expect(out == expected, f"cpupool-list:\n{out!r}\nexpected\n{expected!r}")
    out = run.ok("cpupool-list", "-c")
    machine.expect(out == "Name               CPU list\nPool-0             0,1,2,3\n", f"cpupool-list -c: {out!r}")
    machine.expect(run.ok("cpupool-list", "Pool-0") == expected, "cpupool-list Pool-0")
    bad = run.xl("cpupool-list", "Pool-1")
    machine.expect(bad.returncode == 1 and "Pool 'Pool-1' does not exist" in bad.stderr,
                   f"cpupool-list Pool-1: {bad.returncode} {bad.stderr!r}")


def config_affinity(run):
    run.ok("create", "-p", "examples/hello.cfg", 'name="cpus"', "vcpus=2", "maxvcpus=4", 'cpus=["1", "2-3"]',
           'cpus_soft="all,^0"')
    got = affinities(run, "cpus")
    machine.expect(got == ["1 / 1-3", "2-3 / 1-3", "all / 1-3", "all / 1-3"], f"cpus= in vcpu-list: {got}")


def pinning(run):
    run.ok("vcpu-pin", "cpus", "2", "0")
    got = affinities(run, "cpus")
    machine.expect(got == ["1 / 1-3", "2-3 / 1-3", "0 / 1-3", "all / 1-3"], f"vcpu-pin cpus 2 0: {got}")
    run.ok("vcpu-pin", "cpus", "all", "-", "3")
    got = affinities(run, "cpus")
    machine.expect(got == ["1 / 3", "2-3 / 3", "0 / 3", "all / 3"], f"vcpu-pin cpus all - 3: {got}")
    run.ok("vcpu-pin", "0", "0", "1")
    dom0 = affinities(run, "0")
    machine.expect(dom0[0] == "1 / all", f"vcpu-pin 0 0 1: {dom0}")
    run.ok("vcpu-pin", "0", "0", "all")
    machine.expect(affinities(run, "0")[0] == "all / all", "dom0's vCPU 0 back on every CPU")
    for args, message in ((("cpus", "7", "1"), "Could not set affinity for vcpu `7'."),
                          (("cpus", "0", "5-6"), "Could not set affinity for vcpu `0'."),
                          (("cpus", "x", "1"), "Error: Invalid argument x as VCPU."),
                          (("cpus", "0", "1-x"), "Invalid pcpu range: 1-x.")):
        bad = run.xl("vcpu-pin", *args)
        machine.expect(bad.returncode == 1 and message in bad.stderr,
                       f"xl vcpu-pin {' '.join(args)}: {bad.returncode} {bad.stderr!r}")
    got = affinities(run, "cpus")
    machine.expect(got == ["1 / 3", "2-3 / 3", "0 / 3", "all / 3"], f"refused pins changed something: {got}")


def vcpu_set(run):
    run.ok("vcpu-set", "cpus", "3")
    domid = run.ok("domid", "cpus").strip()
    ls = subprocess.run([os.path.join(run.build, "bin", "xenstore-ls"), f"/local/domain/{domid}/cpu"],
                        env=run.daemon_env, capture_output=True, text=True, timeout=60)
    availability = re.findall(r'availability = "(\w+)"', ls.stdout)
    machine.expect(availability == ["online", "online", "online", "offline"], f"vcpu-set 3:\n{ls.stdout}")
    over = run.xl("vcpu-set", "cpus", "9")
    machine.expect(over.returncode == 1 and "You are overcommmitting!" in over.stderr,
                   f"vcpu-set 9: {over.returncode} {over.stderr!r}")
    beyond = run.xl("vcpu-set", "-i", "cpus", "9")
    machine.expect(beyond.returncode == 1 and "Requested 9 VCPUs, however maxcpus is 4!" in beyond.stderr,
                   f"vcpu-set -i 9: {beyond.returncode} {beyond.stderr!r}")
    run.ok("destroy", "cpus")


def refused_create(run):
    before = run.names()
    bad = run.xl("create", "-p", "examples/hello.cfg", 'name="nocpu"', 'cpus="5-6"')
    machine.expect(bad.returncode != 0 and "setting affinity failed on vcpu `0'" in bad.stderr,
                   f"cpus=5-6: {bad.returncode} {bad.stderr!r}")
    machine.expect(run.names() == before, f"a refused create left a domain: {run.names()}")


def smp_option(build):
    """pvhvd --smp takes 1 to 8 (the hypervisor's MAX_CPUS), else usage status 2 and nothing started."""
    for value in ("0", "9", "x", "2x", ""):
        bad = subprocess.run([os.path.join(build, "bin", "pvhvd"), "--state-dir", "/nonexistent/pvhv", "--smp", value],
                             capture_output=True, text=True, timeout=30)
        machine.expect(bad.returncode == 2 and "pvhvd: --smp must be 1 to 8" in bad.stderr,
                       f"pvhvd --smp {value!r}: {bad.returncode} {bad.stderr!r}")


def main():
    build, hv = guest_boot.arguments()
    smp_option(build)
    with pvhvd_client.TestDaemon(build, ["--hypervisor", hv.name, "--smp", "4"], prefix="pvhv-cpus") as daemon:
        run = Run(build, hv, daemon)
        run.daemon_env = daemon.env
        info(run)
        cpupools(run)
        config_affinity(run)
        pinning(run)
        vcpu_set(run)
        refused_create(run)
        pvhvd_client.stop_and_check(daemon.daemon, hv)
    print(f"ok: {hv.name}: -smp 4: xl info, cpupool-list, cpus= / cpus_soft= in vcpu-list, vcpu-pin (and its bad "
          f"input), vcpu-set through cpu/<i>/availability, a create with no usable CPU refused")


if __name__ == "__main__":
    main()
