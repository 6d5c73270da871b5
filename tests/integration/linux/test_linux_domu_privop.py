"""Debian's Linux as a boot-module domU on ours (ptwr=emulate) meets instructions nobody
emulates for it (issue 11, "Bad input"): /init with linux_init=privop (linux/initramfs.py) runs
/privop (guest/user/privop.c), whose children execute hlt, cli, in, mov from CR0, rdmsr, wbinvd
and ud2 in user mode. As on Xen 4.17 (do_general_protection passes an unemulated #GP on), each
fault goes to Linux, which kills the child (SIGSEGV; SIGILL for ud2's #UD) and says so
(`traps: privop[..] general protection fault ip:<rip>`); the hypervisor reports each #GP with the
vCPU, the mode, the same RIP and the instruction's bytes, and keeps running. The kernel's own
`in` through /dev/port is performed (all ones: d1 has no port access, as Xen's guest_io_read).
The kernel runs where its image's kallsyms say (/proc/kallsyms: no KASLR under PV, so
linux/symbols.py names RIPs right). Then the whole boot as test_linux_domu_ours checks it: every milestone, the fork loop, poweroff,
the machine's clean end and audit.
"""
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "lib"))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(HERE))), "linux"))
import guest_boot  # noqa: E402
import machine  # noqa: E402
import run as linux_run  # noqa: E402
import symbols  # noqa: E402

ITERATIONS = 2
# Each instruction of /privop: its first bytes, the fault and the signal Linux kills with.
INSTRUCTIONS = {"hlt": ("f4", "#GP", 11), "cli": ("fa", "#GP", 11), "in": ("ec", "#GP", 11),
                "mov_cr0": ("0f 20 c0", "#GP", 11), "rdmsr": ("0f 32", "#GP", 11),
                "wbinvd": ("0f 09", "#GP", 11), "ud2": ("0f 0b", "#UD", 4)}


def check_privop(result):
    serial = result.serial
    for name, (bytes_, fault, signal) in INSTRUCTIONS.items():
        line = re.search(rf"^\(d1\) privop: {name} at 0x([0-9a-f]+): (signal|exit) (\d+)", serial, re.M)
        machine.expect(line is not None, f"/privop did not report {name}", result)
        rip = line.group(1)
        machine.expect(line.group(2) == "signal" and int(line.group(3)) == signal,
                       f"{name}: Linux did not kill the child with signal {signal} ({line.group(0)})", result)
        kind = "general protection fault" if fault == "#GP" else "trap invalid opcode"
        machine.expect(re.search(rf"traps: privop\[\d+\] {kind} ip:{rip} ", serial) is not None,
                       f"{name}: no Linux report of the {fault} at {rip}", result)
        report = f"(XEN) d1v0 {fault} not emulated at {rip} (user mode), bytes {bytes_}"
        machine.expect(report in serial, f"{name}: no hypervisor report '{report}'", result)
    machine.expect("(d1) privop: done" in serial, "/privop did not finish", result)
    machine.expect("(d1) linux-init: /dev/port 0x80 reads  ff" in serial,
                   "the kernel's in through /dev/port did not read all ones", result)


def check_no_relocation(build, result):
    """The running kernel's /proc/kallsyms gives each symbol the address linux/symbols.py reads
    from the image: Linux is not relocated under PV (no KASLR), so the names of a RIP hold."""
    table = symbols.load(build)
    running = re.findall(r"^\(d1\) linux-init: kallsyms ([0-9a-f]{16}) \w (\w+)", result.serial, re.M)
    machine.expect(len(running) >= 3, f"the kernel printed {len(running)} /proc/kallsyms lines", result)
    for address, name in running:
        machine.expect(table.address_of(name) == int(address, 16),
                       f"{name} runs at {address}, the image's kallsyms say {table.address_of(name)}", result)
    return len(running)


def main():
    build, _ = guest_boot.arguments()
    result = linux_run.boot(build, "ours", ITERATIONS, timeout=300, ptwr="emulate", until=None, role="domu",
                            linux_init="privop")
    check_privop(result)
    checked = check_no_relocation(build, result)
    # /init's poweroff -f: a domU has no ACPI power-off, so Linux halts, and its Xen halt is
    # SCHEDOP_shutdown(poweroff) (the "powered off" milestone: "Domain 1 shut down: reason poweroff").
    machine.expect("reboot: System halted" in result.serial, "Linux's poweroff -f did not halt", result)
    lines = linux_run.expect_whole_boot(result, "as a domU running /privop on ours", ITERATIONS, linux_run.DOMU_ID)
    print("\n".join(lines))
    print(f"ok: Linux d1 took {len(INSTRUCTIONS)} unemulated instructions as on Xen, each reported with its RIP and "
          f"bytes; {checked} symbols where the image says; the hypervisor ran on to a clean audit "
          f"({result.seconds:.0f} s)")


if __name__ == "__main__":
    main()
