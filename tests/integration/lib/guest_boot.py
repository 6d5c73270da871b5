"""Boots the reference guest kernel as dom0 on either hypervisor, ours or real Xen 4.17, so
the same assertions run on both: Xen's behaviour is the specification of ours.

Each test_guest_*.py takes --hypervisor ours|xen417; CTest registers both variants.
"""
import argparse
import os
import re
from dataclasses import dataclass

import machine


@dataclass
class Hypervisor:
    name: str
    image: str
    append: str
    poweroff: str     # the console line that says dom0 powered off
    crash: str        # the console line that says dom0 crashed
    ends_itself: bool  # ours ends the machine through isa-debug-exit; Xen halts or reboots


def hypervisor(build, name):
    if name == "ours":
        return Hypervisor("ours", machine.ours(build), "loglvl=info dom0_mem=128M",
                          "Domain 0 shut down: reason poweroff", "Domain 0 crashed", True)
    if name == "xen417":
        # Xen 4.17: "Hardware Dom0 halted: halting machine" / "Hardware Dom0 crashed: ..."
        return Hypervisor("xen417", machine.xen417(build),
                          "console=com1 com1=115200,8n1 dom0_mem=128M loglvl=all guest_loglvl=all",
                          "Dom0 halted", "Dom0 crashed", False)
    raise SystemExit(f"unknown hypervisor {name}")


def arguments():
    parser = argparse.ArgumentParser()
    parser.add_argument("--build", default=None)
    parser.add_argument("--hypervisor", default="ours", choices=["ours", "xen417"])
    args = parser.parse_args()
    build = machine.build_dir(args.build)
    return build, hypervisor(build, args.hypervisor)


def boot_guest(build, hv, cmdline, ending, timeout=180, hypervisor_args="", smp=1, extra=()):
    """ending: the console line after which the machine is done (hv.poweroff or hv.crash).
    hypervisor_args: extra hypervisor command-line options (ours: e.g. ptwr=writable).
    smp: the machine's CPU count (-smp N). extra: more QEMU arguments (e.g. -icount)."""
    kernel = os.path.join(build, "guest", "kernel")
    initrd = os.path.join(build, "guest", "initrd.cpio")
    for path in (kernel, initrd, hv.image):
        machine.expect(os.path.exists(path), f"missing {path} (build first)")
    append = f"{hv.append} {hypervisor_args}".strip()
    return machine.boot(hv.image, append, [(kernel, cmdline), (initrd, "")], timeout=timeout,
                        until=None if hv.ends_itself else ending, memory="512M", smp=smp, extra=extra)


def expect_ended(result, hv, ending, exit_value):
    """Checks the machine ended the expected way (and, on ours, with the exit value)."""
    machine.expect(not result.timed_out, f"{hv.name}: machine did not end in time", result)
    machine.expect(ending in result.serial, f"{hv.name}: missing '{ending}'", result)
    if hv.ends_itself:
        # Ours audits every frame's counts against the page tables when the domain is gone.
        machine.expect("audit: clean" in result.serial, f"{hv.name}: frame-table audit not clean", result)
        machine.expect(result.debug_exit_value() == exit_value,
                       f"{hv.name}: exit value {result.debug_exit_value()}, expected {exit_value}", result)


def selftest_lines(result, name, prefix=""):
    """A guest selftest's lines (`prefix` "(d1) " for a domU's), "passed" or "failed" last."""
    return [l for l in result.lines() if l.startswith(f"{prefix}selftest {name}: ")]


def check_selftest(result, name, minimum, prefix=""):
    """A guest selftest's lines (`prefix` "(d1) " for a domU's): no FAIL, its "passed" line,
    at least `minimum` lines. Returns the number of checks."""
    lines = result.lines()
    checks = selftest_lines(result, name, prefix)
    failures = [l for l in checks if ": FAIL" in l]
    machine.expect(not failures, "; ".join(failures), result)
    machine.expect(f"{prefix}selftest {name}: passed" in lines, f"no '{prefix}selftest {name}: passed' line", result)
    machine.expect(len(checks) >= minimum, f"{prefix}{name}: only {len(checks)} lines", result)
    return len(checks) - 1


def selftest_main(name, minimum):
    """A test file's main for `selftest=name` alone: on ours in both ptwr= modes, on Xen 4.17 as
    it boots; each run passes with at least `minimum` lines and init runs after it."""
    build, hv = arguments()
    for mode in (("emulate", "writable") if hv.ends_itself else ("",)):
        args = f"ptwr={mode}" if mode else ""
        result = boot_guest(build, hv, f"selftest={name}", hv.poweroff, hypervisor_args=args)
        expect_ended(result, hv, hv.poweroff, 0)
        lines = check_selftest(result, name, minimum) + 1
        machine.expect("init exited: status 0" in result.lines(), "init did not run", result)
        print(f"ok: selftest={name} {args} on {hv.name}, {lines} lines ({result.seconds:.1f} s)")


def cpus_used(result, domain):
    """Where each vCPU of `domain` ran, from the hypervisor's "Domain N vCPUs ran on:" line
    (printed with sched_smp=1): {vcpu: {cpu, ...}}."""
    lines = re.findall(rf"Domain {domain} vCPUs ran on:(.*)", result.serial)
    machine.expect(lines, f"no 'Domain {domain} vCPUs ran on' line", result)
    used = {}
    for vcpu, cpus in re.findall(r"v(\d+) ([\d,-]+)", lines[0]):
        used[int(vcpu)] = set() if cpus == "-" else {int(cpu) for cpu in cpus.split(",")}
    return used
