"""Boots Debian's Linux PV kernel with the project's initramfs (linux/initramfs.py) and prints
what its fork loop measured: `make linux`.

    python3 linux/run.py [--hypervisor xen417,ours] [--iterations N] [--deterministic] [--show]

Linux runs as dom0 (a boot-module domU on ours comes with issue 11's later milestones); a boot
that stops names the last milestone it reached (MILESTONES) and why (Linux's panic, the
hypervisor's report of the guest's fatal trap). Xen
4.17 boots the bzImage itself; ours is given the vmlinux inside it (linux/bzimage.py), as its
boot builder reads ELF images only. Each boot ends at /init's last line, by timeout, or with
the machine; the exit status is 0 only when every hypervisor asked for ran the loop to its end.
"""
import argparse
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tests", "integration"))
sys.path.insert(0, os.path.join(ROOT, "bench"))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bzimage  # noqa: E402
import initramfs  # noqa: E402
import machine  # noqa: E402
import run_bench  # noqa: E402

DONE = "linux-init: done"
MEMORY = "1G"
DOM0_MEMORY = "dom0_mem=512M"
KERNEL_ARGS = "console=hvc0 earlyprintk=xen"


# What a boot reaches, in order (issue 11's milestones): a line of the console each, or of the
# hypervisor's report at the end. A boot that stops is reported by the last one it reached.
MILESTONES = (
    ("Linux version", "Linux version 6."),
    ("Hypervisor detected: Xen PV", "Hypervisor detected: Xen PV"),
    ("console [hvc0] enabled", "printk: console [hvc0] enabled"),
    ("installing Xen timer", "installing Xen timer for CPU 0"),
    ("Run /init", "Run /init as init process"),
    ("busybox /init up", "linux-init: Linux 6."),
    ("fork loop done", "bench done"),
    ("/init done", "linux-init: done, status 0"),
    ("powered off", "Domain 0 shut down: reason poweroff"),
    ("audit clean", "audit: clean"),
)
# Lines that say why a boot stopped: Linux's panic and oops report (its RIP symbolized by Linux
# itself), the hypervisor's report of a guest's fatal trap and of the crash.
FATAL_MARKS = ("Kernel panic", "BUG:", "kernel BUG", "Oops", "RIP:", "unhandled exception", "crashed:",
               "fatal trap", "MSR access error")


def milestones(serial):
    """(reached, missing): the milestone names in order, split at the first one not reached."""
    position, reached = 0, []
    for index, (name, marker) in enumerate(MILESTONES):
        found = serial.find(marker, position)
        if found < 0:
            return reached, [n for n, _ in MILESTONES[index:]]
        position = found + len(marker)
        reached.append(name)
    return reached, []


def fatal_report(serial, limit=12):
    """The lines that say why the boot stopped (the first `limit` of them)."""
    lines = [line.strip() for line in serial.splitlines() if any(mark in line for mark in FATAL_MARKS)]
    return lines[:limit]


def images(build):
    """(bzImage, vmlinux, initramfs): the vmlinux and initramfs made if missing or older."""
    deps = os.path.join(build, "deps", "linux")
    vmlinuz = os.path.join(deps, "vmlinuz")
    if not os.path.exists(vmlinuz):
        raise SystemExit(f"linux: {vmlinuz} missing: run `make deps` (scripts/install-deps.sh)")
    out = os.path.join(build, "linux")
    os.makedirs(out, exist_ok=True)
    vmlinux = os.path.join(out, "vmlinux")
    if not os.path.exists(vmlinux) or os.path.getmtime(vmlinux) < os.path.getmtime(vmlinuz):
        bzimage.main([vmlinuz, vmlinux])
    return vmlinuz, vmlinux, initramfs.build(build)


def boot(build, hypervisor, iterations, deterministic=False, timeout=600, ptwr="", until=DONE):
    """One boot, ended at `until` (None: when the machine ends itself), the timeout or QEMU's exit."""
    vmlinuz, vmlinux, initrd = images(build)
    kernel_args = f"{KERNEL_ARGS} bench_iterations={iterations}"
    if hypervisor == "xen417":
        image, append, kernel = machine.xen417(build), f"console=com1 com1=115200,8n1 {DOM0_MEMORY}", vmlinuz
    else:
        image, append, kernel = machine.ours(build), f"loglvl=info {DOM0_MEMORY}", vmlinux
        if ptwr:
            append += f" ptwr={ptwr}"
    extra = ("-icount", "shift=0") if deterministic else ()
    return machine.boot(image, append, [(kernel, kernel_args), (initrd, "")], timeout=timeout, until=until,
                        memory=MEMORY, extra=extra)


def summary(hypervisor, result):
    """(ok, lines): the loop's figures, or where the boot stopped."""
    parsed = run_bench.parse_output(result.serial)
    figures = {name: r for name, r in parsed.results.items() if r.status == "ok"}
    ok = parsed.done and DONE in result.serial and {"fork_execve", "fork_sh"} <= set(figures)
    lines = [f"{hypervisor}: " + ("ran the fork loop" if ok else "did not finish the fork loop")
             + f" ({result.seconds:.0f} s)"]
    for name, r in figures.items():
        lines.append(f"  {name}: {r.iterations} iterations, {r.ns_per_op / 1000.0:.1f} us/op")
    reached, missing = milestones(result.serial)
    if missing:
        lines.append(f"  last milestone: {reached[-1] if reached else 'none'}; next: {missing[0]}")
        lines += [f"    {line}" for line in fatal_report(result.serial)]
    if not ok:
        last = [line for line in result.serial.splitlines() if line.strip()][-6:]
        lines.append("  " + ("timed out" if result.timed_out else f"ended, QEMU exit status {result.exit_status}")
                     + "; last lines:")
        lines += [f"    {line}" for line in last]
    return ok, lines


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--build", default=os.path.join(ROOT, "build"))
    parser.add_argument("--hypervisor", default="xen417,ours")
    parser.add_argument("--iterations", type=int, default=1000)
    parser.add_argument("--deterministic", action="store_true", help="-icount shift=0 (virtual time)")
    parser.add_argument("--timeout", type=float, default=900)
    parser.add_argument("--show", action="store_true", help="print each console")
    parser.add_argument("--ptwr", default="", help="ours: ptwr=emulate|writable (its default otherwise)")
    args = parser.parse_args(argv)
    build = os.path.abspath(args.build)
    all_ok = True
    for hypervisor in args.hypervisor.split(","):
        result = boot(build, hypervisor, args.iterations, args.deterministic, args.timeout, args.ptwr)
        if args.show:
            print(result.serial)
        ok, lines = summary(hypervisor, result)
        print("\n".join(lines), flush=True)
        all_ok = all_ok and ok
    return 0 if all_ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
