"""A multi-vCPU domU through xl (issue 30, item 3): xl.cfg's `vcpus` and `maxvcpus`.

`xl create -p` of the reference guest with vcpus=2 maxvcpus=4: libxl's order (createdomain
with max_vcpus 4, XEN_DOMCTL_max_vcpus 4, vCPU 0's context only), the store's
cpu/<i>/availability (online, online, offline, offline, read by xenstore-ls), `xl list` with
one vCPU online, `xl vcpu-list` with Xen's columns: vCPU 0 online, vCPUs 1-3 without a context
("-" for the CPU, "--p"). Unpaused, the guest brings its other vCPUs up itself (VCPUOP_initialise
/ up: selftest=vcpus, every check passing) and waits on xenbus: `xl list` then counts 4,
`xl vcpu-list` shows all four online on CPU 0 with hard and soft affinity "all", and `xl
shutdown -w` ends it. `xl create` with maxvcpus < vcpus is refused by xl (status 1). On ours a
domain of 9 vCPUs is refused by the hypervisor (createdomain's -EINVAL: at most 8; xl create's
status 3, nothing left behind); Xen 4.17 (up to MAX_VIRT_CPUS) creates it, and vcpu-list shows
its 9 vCPUs. The daemon ends cleanly; on ours the frame audit is clean.
"""
import os
import re
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "lib"))
import guest_boot  # noqa: E402
import machine  # noqa: E402
import pvhvd_client  # noqa: E402
from test_guest_xl_ptwr_mode import Run  # noqa: E402

HEADER = "Name                                ID  VCPU   CPU State   Time(s) Affinity (Hard / Soft)"
ROW = re.compile(r"^(\S+)\s+(\d+)\s+(\d+)\s+(\S+)\s+(\S+)\s+([\d.]+)\s+(.*)$")


def vcpu_rows(run, name):
    out = run.ok("vcpu-list", name)
    lines = out.rstrip("\n").split("\n")
    machine.expect(lines[0] == HEADER, f"vcpu-list header {lines[0]!r}")
    rows = []
    for line in lines[1:]:
        m = ROW.match(line)
        machine.expect(m is not None, f"vcpu-list row {line!r}")
        rows.append(m.groups())
    return rows


def listed_vcpus(run, name):
    for line in run.ok("list").splitlines()[1:]:
        fields = line.split()
        if fields and fields[0] == name:
            return int(fields[3])
    machine.expect(False, f"{name} not in xl list")


def domid(run, name):
    return run.ok("domid", name).strip()


def paused_domain(run):
    run.ok("create", "-p", "examples/hello.cfg", 'name="vcpus"', "vcpus=2", "maxvcpus=4",
           'extra="selftest=vcpus xenbus=wait"')
    ls = subprocess.run([os.path.join(run.build, "bin", "xenstore-ls"), f"/local/domain/{domid(run, 'vcpus')}/cpu"],
                        env=run.daemon_env, capture_output=True, text=True, timeout=60)
    machine.expect(ls.returncode == 0, f"xenstore-ls: {ls.returncode} {ls.stderr}")
    store = ls.stdout
    availability = re.findall(r'availability = "(\w+)"', store)
    machine.expect(availability == ["online", "online", "offline", "offline"], f"cpu nodes:\n{store}")
    machine.expect(listed_vcpus(run, "vcpus") == 1, "xl list: not one vCPU online while paused")
    rows = vcpu_rows(run, "vcpus")
    machine.expect([r[2] for r in rows] == ["0", "1", "2", "3"], f"vcpu-list: {rows}")
    machine.expect(rows[0][3] == "0" and rows[0][4] == "---", f"vCPU 0 of a paused domain: {rows[0]}")
    for r in rows[1:]:
        machine.expect(r[3] == "-" and r[4] == "--p", f"a vCPU without a context: {r}")
    machine.expect(all(r[6] == "all / all" for r in rows), f"affinity: {rows}")


def running_domain(run):
    run.ok("unpause", "vcpus")
    deadline = time.monotonic() + 300
    while "selftest vcpus: passed" not in run.console("vcpus"):
        log = run.console("vcpus")
        machine.expect("selftest vcpus: failed" not in log and time.monotonic() < deadline, f"the domU: {log[-4000:]}")
        time.sleep(1)
    # "passed" says no check failed; the lines counted are those the console ring carried (on Xen
    # a burst the ring cannot take goes to console_io, Xen's own console).
    log = run.console("vcpus")
    failures = [line for line in log.splitlines() if "selftest vcpus" in line and "FAIL" in line]
    machine.expect(not failures, f"the domU's selftest=vcpus: {failures}")
    machine.expect("selftest vcpus: vCPUs: 4" in log, f"the domU did not see 4 vCPUs: {log[-2000:]}")
    checks = sum(1 for line in log.splitlines() if line.startswith("selftest vcpus: ") and line.endswith(": ok"))
    machine.expect(listed_vcpus(run, "vcpus") == 4, "xl list: not 4 vCPUs online")
    rows = vcpu_rows(run, "vcpus")
    machine.expect(len(rows) == 4 and all(r[3] == "0" and r[4] in ("-b-", "r--") for r in rows),
                   f"vcpu-list of the running domain: {rows}")
    run.ok("shutdown", "-w", "vcpus")
    machine.expect("vcpus" not in run.names(), "the domU is still there after shutdown -w")
    return checks


def refusals(run, hv):
    before = run.names()
    refused = run.xl("create", "examples/hello.cfg", 'name="wrong"', "vcpus=4", "maxvcpus=2")
    machine.expect(refused.returncode == 1 and "xl: maxvcpus < vcpus" in refused.stderr,
                   f"maxvcpus < vcpus: {refused.returncode} {refused.stderr!r}")
    if hv.name == "ours":
        nine = run.xl("create", "-p", "examples/hello.cfg", 'name="nine"', "vcpus=9")
        machine.expect(nine.returncode == 3, f"9 vCPUs on ours: {nine.returncode} {nine.stdout!r} {nine.stderr!r}")
        machine.expect(run.names() == before, f"a refused create left a domain: {run.names()}")
        return "9 vCPUs refused (createdomain -EINVAL)"
    run.ok("create", "-p", "examples/hello.cfg", 'name="nine"', "vcpus=9")
    rows = vcpu_rows(run, "nine")
    machine.expect(len(rows) == 9, f"9 vCPUs on Xen 4.17: {rows}")
    run.ok("destroy", "nine")
    return "9 vCPUs created"


def main():
    build, hv = guest_boot.arguments()
    with pvhvd_client.TestDaemon(build, ["--hypervisor", hv.name], prefix="pvhv-vcpus") as daemon:
        run = Run(build, hv, daemon)
        run.daemon_env = daemon.env
        paused_domain(run)
        checks = running_domain(run)
        beyond = refusals(run, hv)
        pvhvd_client.stop_and_check(daemon.daemon, hv)
    print(f"ok: {hv.name}: vcpus=2 maxvcpus=4 paused (cpu nodes, one vCPU online), the guest brought up 4 "
          f"(selftest=vcpus passed, {checks} ok lines on its console), vcpu-list and list agree; "
          f"maxvcpus < vcpus refused; {beyond}")


if __name__ == "__main__":
    main()
