"""Boots Debian's Linux PV kernel with the project's initramfs (linux/initramfs.py) and prints
what its fork loop measured: `make linux`.

    python3 linux/run.py [--hypervisor xen417,ours] [--role domu|dom0] [--iterations N] [--deterministic] [--show]
                         [--smp N] [--vcpus N] [--sched-smp 0|1] [--parallel-loops]

On ours Linux runs as a boot-module domU (`--role domu`, the default): dom0 is the reference
guest kernel, d1 Debian's kernel with DOMU_MEMORY, its console the PV console ring the
hypervisor drains (`(d1) ` lines), `store_evtchn` 0 so Linux never waits for xenstore. Xen
4.17 on x86 builds no domain but dom0 at boot (dom0less is Arm-only), so there the domU is the
toolstack's: pvhvd and `xl create examples/linux.cfg` with the loop's command line (the
builder decompresses the bzImage). `--role dom0` boots Linux as dom0 on either. A boot that stops names the last milestone it reached
(MILESTONES) and why (Linux's panic, the hypervisor's report of the guest's fatal trap). Xen
4.17 boots the bzImage itself; ours is given the vmlinux inside it (linux/bzimage.py), as its
boot builder reads ELF images only. Each boot ends at /init's last line, by timeout, or with
the machine; the exit status is 0 only when every hypervisor asked for ran the loop to its end.

Several CPUs: `--smp N` gives the machine N CPUs (QEMU -smp N; pvhvd --smp N on Xen 4.17's
toolstack path), `--vcpus N` gives Linux N vCPUs (ours: `domU_max_vcpus=N` for the boot-module
domU, `dom0_max_vcpus=N` for dom0; Xen 4.17: `vcpus=N` to `xl create`, `dom0_max_vcpus=N` for
dom0), `--sched-smp 1` runs ours's guests on every CPU (its `sched_smp=1`; 0 keeps every vCPU
on CPU 0). Linux starts the other vCPUs itself (VCPUOP_initialise / up); /init prints
`linux-init: N CPUs online`, and with `--parallel-loops` (linux_init=smp) runs one fork loop per
online CPU at once before the ordinary one, each reporting `linux-init: loop K done, status 0`.
"""
import argparse
import os
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tests", "integration", "lib"))
sys.path.insert(0, os.path.join(ROOT, "bench"))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bzimage  # noqa: E402
import initramfs  # noqa: E402
import machine  # noqa: E402
import pvhvd_client  # noqa: E402
import run_bench  # noqa: E402
import symbols  # noqa: E402

DONE = "linux-init: done"
MEMORY = "1G"
DOM0_MEMORY = "dom0_mem=512M"
# Linux as a boot-module domU: the reference guest kernel is dom0 (it runs its own init and
# powers off; the machine runs on until every domain has stopped), Linux is d1.
DOMU_MEMORY = "dom0_mem=64M domU_mem=256M"
DOMU_ID = 1
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
               "fatal trap", "MSR access error", "no handler, crashing")


# The milestones Linux's own console shows (a domU's console log under the toolstack: the
# hypervisor's lines are not in it).
CONSOLE_MILESTONES = len(MILESTONES) - 2


def milestones_of(domid):
    """MILESTONES for Linux as domain `domid` (its shutdown is reported by its id); None: those of
    its own console only."""
    if domid is None:
        return MILESTONES[:CONSOLE_MILESTONES]
    return tuple((name, marker.replace("Domain 0 ", f"Domain {domid} ")) for name, marker in MILESTONES)


def milestones(serial, domid=0):
    """(reached, missing): the milestone names in order, split at the first one not reached."""
    position, reached = 0, []
    listed = milestones_of(domid)
    for index, (name, marker) in enumerate(listed):
        found = serial.find(marker, position)
        if found < 0:
            return reached, [n for n, _ in listed[index:]]
        position = found + len(marker)
        reached.append(name)
    return reached, []


# The kernel's symbols (linux/symbols.py), read once the images are known (images()).
KERNEL_SYMBOLS = {"build": None, "symbols": None}


def kernel_symbols():
    """(symbols, -dbg vmlinux or None) of the last images() build; (None, None) before or without any."""
    build = KERNEL_SYMBOLS["build"]
    if build is None:
        return None, None
    if KERNEL_SYMBOLS["symbols"] is None:
        try:
            KERNEL_SYMBOLS["symbols"] = symbols.load(build) or False
        except symbols.SymbolsError as error:
            print(f"linux: no kernel symbols: {error}", file=sys.stderr)
            KERNEL_SYMBOLS["symbols"] = False
    return KERNEL_SYMBOLS["symbols"] or None, symbols.dbg_vmlinux(build)


def fatal_report(serial, limit=12):
    """The lines that say why the boot stopped (the first `limit` of them), each kernel address
    in the hypervisor's lines named `function+0xoff/0xsize` (Linux names its own)."""
    lines = [line.strip() for line in serial.splitlines() if any(mark in line for mark in FATAL_MARKS)][:limit]
    if not any(line.startswith("(XEN)") and symbols.KERNEL_ADDRESS.search(line) for line in lines):
        return lines
    table, dbg = kernel_symbols()
    return [symbols.annotate(line, table, dbg) if line.startswith("(XEN)") else line for line in lines]


def images(build):
    """(bzImage, vmlinux, initramfs): the vmlinux and initramfs made if missing or older."""
    deps = os.path.join(build, "deps", "linux")
    vmlinuz = os.path.join(deps, "vmlinuz")
    if not os.path.exists(vmlinuz):
        raise SystemExit(f"linux: {vmlinuz} missing: run `make deps` (scripts/install-deps.sh)")
    out = os.path.join(build, "linux")
    os.makedirs(out, exist_ok=True)
    KERNEL_SYMBOLS.update(build=build, symbols=None)
    vmlinux = os.path.join(out, "vmlinux")
    if not os.path.exists(vmlinux) or os.path.getmtime(vmlinux) < os.path.getmtime(vmlinuz):
        bzimage.main([vmlinuz, vmlinux])
    return vmlinuz, vmlinux, initramfs.build(build)


def role_on(hypervisor, role):
    """How Linux runs: on ours a boot-module domU or dom0; on Xen 4.17, whose x86 builds no
    domain but dom0 at boot, dom0 or a domU through the toolstack ("xl")."""
    if hypervisor == "xen417" and role == "domu":
        return "xl"
    return role


def domain_of(hypervisor, role):
    """Linux's domain id in the boot: what its milestones and shutdown line name (None: only
    its own console is seen)."""
    role = role_on(hypervisor, role)
    return None if role == "xl" else DOMU_ID if role == "domu" else 0


def kernel_command_line(iterations, linux_init=""):
    """Linux's command line: the console, the loop's iterations, /init's mode (empty: the loop)."""
    return f"{KERNEL_ARGS} bench_iterations={iterations}" + (f" linux_init={linux_init}" if linux_init else "")


def boot_through_xl(build, hypervisor, iterations, deterministic=False, timeout=600, smp=1, vcpus=1,
                    linux_init=""):
    """Linux as a PV domU built by the toolstack: pvhvd starts the machine (-icount through
    PVHV_QEMU_EXTRA when deterministic), `xl create examples/linux.cfg` with the loop's command
    line; ends at /init's last line on the domU's console (the daemon's log of it), the
    Boot's serial. `smp`: the daemon's machine's CPUs; `vcpus`: the domU's (xl.cfg's vcpus)."""
    images(build)
    saved = os.environ.get("PVHV_QEMU_EXTRA")
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="pvhv-linux") as state:
        if deterministic:
            os.environ["PVHV_QEMU_EXTRA"] = "-icount shift=0"
        try:
            daemon = pvhvd_client.Daemon(build, state, ["--hypervisor", hypervisor]
                                         + (["--smp", str(smp)] if smp != 1 else []))
        finally:
            if saved is None:
                os.environ.pop("PVHV_QEMU_EXTRA", None)
            else:
                os.environ["PVHV_QEMU_EXTRA"] = saved
        try:
            create = subprocess.run([os.path.join(build, "bin", "xl"), "create", "examples/linux.cfg",
                                     f'extra="{kernel_command_line(iterations, linux_init)}"', f"vcpus={vcpus}"],
                                    cwd=ROOT,
                                    env=dict(os.environ, PVHV_STATE_DIR=state), capture_output=True, text=True,
                                    timeout=600)
            log, log_path = "", os.path.join(state, "console-linux.log")
            deadline = time.monotonic() + timeout
            while create.returncode == 0 and DONE not in log and time.monotonic() < deadline:
                time.sleep(1)
                log = open(log_path, errors="replace").read() if os.path.exists(log_path) else ""
            if create.returncode != 0:
                log += f"xl create: {create.stderr.strip()}\n"
            return machine.Boot(log, create.returncode, DONE not in log, time.monotonic() - started)
        finally:
            daemon.stop()
            daemon.kill_machine()


def boot(build, hypervisor, iterations, deterministic=False, timeout=600, ptwr="", until=DONE, role="dom0",
         watch=None, linux_init="", smp=1, vcpus=1, sched_smp=None):
    """One boot, ended at `until` (None: when the machine ends itself), the timeout or QEMU's exit.
    role "domu": on ours, Linux as d1 beside the reference guest kernel as dom0. `linux_init`:
    the initramfs's linux_init= (linux/initramfs.py), the loop's default when empty. `smp`: the
    machine's CPUs; `vcpus`: Linux's (1 adds nothing to the command lines); `sched_smp`: ours's
    sched_smp= (None: its default)."""
    if role_on(hypervisor, role) == "xl":
        return boot_through_xl(build, hypervisor, iterations, deterministic, timeout, smp, vcpus, linux_init)
    vmlinuz, vmlinux, initrd = images(build)
    kernel_args = kernel_command_line(iterations, linux_init)
    if hypervisor == "xen417":
        image, append, kernel = machine.xen417(build), f"console=com1 com1=115200,8n1 {DOM0_MEMORY}", vmlinuz
        if vcpus != 1:
            append += f" dom0_max_vcpus={vcpus}"
        modules = [(kernel, kernel_args), (initrd, "")]
    else:
        domu = role_on(hypervisor, role) == "domu"
        image, append = machine.ours(build), f"loglvl=info {DOMU_MEMORY if domu else DOM0_MEMORY}"
        if ptwr:
            append += f" ptwr={ptwr}"
        if vcpus != 1:
            append += f" domU_max_vcpus={vcpus}" if domu else f" dom0_max_vcpus={vcpus}"
        if sched_smp is not None:
            append += f" sched_smp={int(sched_smp)}"
        modules = [(vmlinux, kernel_args), (initrd, "")]
        if domu:
            guest = os.path.join(build, "guest")
            modules = [(os.path.join(guest, "kernel"), ""), (os.path.join(guest, "initrd.cpio"), "")] + modules
    extra = ("-icount", "shift=0") if deterministic else ()
    return machine.boot(image, append, modules, timeout=timeout, until=until, memory=MEMORY, extra=extra,
                        watch=watch, smp=smp)


def stuck_after_fatal(quiet_seconds=30):
    """A machine.boot watch: ends a boot whose console reported a fatal mark (FATAL_MARKS) and
    has then been silent for `quiet_seconds` (Linux hung after an oops), rather than its timeout."""
    state = {"length": -1, "since": 0.0}

    def watch(serial):
        now = time.monotonic()
        if len(serial) != state["length"]:
            state["length"], state["since"] = len(serial), now
            return False
        return now - state["since"] > quiet_seconds and bool(fatal_report(serial, 1))
    return watch


def summary(hypervisor, result, domid=0):
    """(ok, lines): the loop's figures, or where the boot stopped."""
    parsed = run_bench.parse_output(result.serial)
    figures = {name: r for name, r in parsed.results.items() if r.status == "ok"}
    ok = parsed.done and DONE in result.serial and {"fork_execve", "fork_sh"} <= set(figures)
    lines = [f"{hypervisor}: " + ("ran the fork loop" if ok else "did not finish the fork loop")
             + f" ({result.seconds:.0f} s)"]
    for name, r in figures.items():
        lines.append(f"  {name}: {r.iterations} iterations, {r.ns_per_op / 1000.0:.1f} us/op")
    reached, missing = milestones(result.serial, domid)
    if missing:
        lines.append(f"  last milestone: {reached[-1] if reached else 'none'}; next: {missing[0]}")
        lines += [f"    {line}" for line in fatal_report(result.serial)]
    if not ok:
        last = [line for line in result.serial.splitlines() if line.strip()][-6:]
        lines.append("  " + ("timed out" if result.timed_out else f"ended, QEMU exit status {result.exit_status}")
                     + "; last lines:")
        lines += [f"    {line}" for line in last]
    return ok, lines


def runs(hypervisors, ptwr_modes):
    """(hypervisor, ptwr) of each boot: ours once per PTE-write mode asked for, Xen 4.17 once."""
    modes = [m for m in ptwr_modes.split(",") if m] or [""]
    for hypervisor in hypervisors.split(","):
        for mode in (modes if hypervisor == "ours" else [""]):
            yield hypervisor, mode


def expect_whole_boot(result, label, iterations, domid=0):
    """For the integration tests: every milestone in order (else the last one reached and why:
    Linux's panic or oops, the hypervisor's report of the guest's fatal trap; a hung boot the
    same way, by timeout), the loop's `iterations` of each benchmark, the machine's clean end.
    Returns the summary's lines."""
    reached, missing = milestones(result.serial, domid)
    why = "; ".join(fatal_report(result.serial)) or "no panic or fatal trap reported"
    stopped = "timed out" if result.timed_out else f"machine exit value {result.debug_exit_value()}"
    machine.expect(not missing, f"Linux {label} stopped ({stopped}) after milestone "
                   f"'{reached[-1] if reached else 'none'}', before '{missing[0] if missing else ''}': {why}", result)
    ok, lines = summary(label, result, domid)
    machine.expect(ok, "the fork loop did not run: " + "; ".join(lines), result)
    for name in ("fork_execve", "fork_sh"):
        machine.expect(f"bench {name} iterations={iterations} " in result.serial,
                       f"{name} did not run {iterations} times", result)
    machine.expect(result.debug_exit_value() == 0, f"the machine did not end cleanly ({stopped})", result)
    return lines


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--build", default=os.path.join(ROOT, "build"))
    parser.add_argument("--hypervisor", default="xen417,ours")
    parser.add_argument("--iterations", type=int, default=1000)
    parser.add_argument("--deterministic", action="store_true", help="-icount shift=0 (virtual time)")
    parser.add_argument("--timeout", type=float, default=900)
    parser.add_argument("--show", action="store_true", help="print each console")
    parser.add_argument("--ptwr", default="", help="ours: ptwr=emulate|writable, or a list (one boot each; "
                        "its default otherwise)")
    parser.add_argument("--role", choices=("domu", "dom0"), default="domu",
                        help="Linux as a domU (default: a boot-module domU on ours, through pvhvd and xl on "
                        "Xen 4.17) or as dom0")
    parser.add_argument("--smp", type=int, default=1, help="the machine's CPUs (QEMU -smp N)")
    parser.add_argument("--vcpus", type=int, default=1, help="Linux's vCPUs")
    parser.add_argument("--sched-smp", type=int, choices=(0, 1), default=None,
                        help="ours: sched_smp=0|1 (guests on CPU 0 only, or on every CPU); its default otherwise")
    parser.add_argument("--parallel-loops", action="store_true",
                        help="/init runs one fork loop per online CPU at once first (linux_init=smp)")
    args = parser.parse_args(argv)
    build = os.path.abspath(args.build)
    all_ok = True
    for hypervisor, ptwr in runs(args.hypervisor, args.ptwr):
        role = role_on(hypervisor, args.role)
        # Ours ends the machine itself once every domain has stopped, after its audit.
        until = DONE if hypervisor == "xen417" else None
        result = boot(build, hypervisor, args.iterations, args.deterministic, args.timeout, ptwr, until, role,
                      linux_init="smp" if args.parallel_loops else "", smp=args.smp, vcpus=args.vcpus,
                      sched_smp=args.sched_smp)
        if args.show:
            print(result.serial)
        label = f"{hypervisor} ({role}{', ptwr=' + ptwr if ptwr else ''})"
        ok, lines = summary(label, result, domain_of(hypervisor, role))
        print("\n".join(lines), flush=True)
        all_ok = all_ok and ok
    return 0 if all_ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
