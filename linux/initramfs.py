"""The initramfs of the Linux guest: Debian's busybox-static, the project's /bench (the same
fork benchmarks the reference guest runs, built static with musl: they run on Linux too) and
an /init that runs the fork loop and powers off.

    python3 linux/initramfs.py --build build            # writes build/linux/initramfs.cpio

/init reads `bench_iterations=N` from the kernel command line (Linux hands unknown key=value
words to init as its environment): 1000 in `make linux` and `make bench`, a few in `make test`.
`linux_init=shell` gives a busybox shell on the console instead of the loop
(examples/linux.cfg); `linux_init=privop` runs /privop (guest/user/privop.c: privileged
instructions from user mode), reads a port through /dev/port and prints a few /proc/kallsyms
lines before the loop (tests/integration/linux/test_linux_domu_privop.py); `linux_init=trace` waits
for a line on the console, then runs only fork+execve, each iteration marked for the trace
(linux/trace_loop.py); `linux_init=smp` runs one fork loop per online CPU at once, each pinned
to its CPU, and prints `linux-init: loop N done, status S, ...` for each before the ordinary loop
(linux/run.py --smp N --vcpus N --parallel-loops, tests/integration/linux/test_linux_smp.py).
Every /init prints `linux-init: N CPUs online`, counted from /sys/devices/system/cpu/online.
/sbin/poweroff is what Linux's orderly_poweroff runs when xenbus sees
`control/shutdown = poweroff`: init here is a shell, not busybox's init, so it powers off
with -f itself.
"""
import argparse
import os
import stat
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tests", "integration", "lib"))
import cpio_newc  # noqa: E402

INIT = """#!/bin/busybox sh
# /init of the Linux guest (linux/initramfs.py): fork+execve /bin/true and sh -c /bin/true,
# timed by /bench, then power off.
/bin/busybox mount -t proc proc /proc
/bin/busybox mount -t sysfs sysfs /sys
/bin/busybox --install -s /bin
echo "linux-init: Linux $(uname -r) up, $(grep -c ^processor /proc/cpuinfo) CPU, $(grep MemTotal /proc/meminfo)"
# The CPUs the kernel brought up, counted from its online list ("0-3", "0,2-3"): each vCPU it
# started with VCPUOP_initialise / up.
online=0
for range in $(tr , ' ' < /sys/devices/system/cpu/online); do
    case "$range" in
        *-*) online=$((online + ${range#*-} - ${range%-*} + 1)) ;;
        *) online=$((online + 1)) ;;
    esac
done
echo "linux-init: $online CPUs online ($(cat /sys/devices/system/cpu/online))"
if [ "${linux_init:-bench}" = shell ]; then
    # An interactive shell on the console (hvc0), e.g. through `xl create examples/linux.cfg -c`;
    # its exit, or control/shutdown (`xl shutdown`, which runs /sbin/poweroff), powers off.
    echo "linux-init: shell on the console; exit or xl shutdown powers off"
    /bin/sh
    echo "linux-init: shell exited, status $?"
    poweroff -f
fi
if [ "${linux_init:-bench}" = privop ]; then
    # Privileged instructions from user mode (/privop: the guest kernel kills each child),
    # I/O ports through /dev/port (the kernel's own `in`, which the hypervisor performs: all
    # ones for a domain without port access), and where the kernel's text is (no KASLR under
    # PV: /proc/kallsyms names the addresses of the image's own symbols); then the loop.
    /privop
    echo "linux-init: /dev/port 0x80 reads $(dd if=/dev/port bs=1 skip=128 count=1 2>/dev/null | od -An -tx1)"
    echo 0 > /proc/sys/kernel/kptr_restrict
    grep -E ' (_stext|xen_start_kernel|do_fork_idle|kernel_clone)$' /proc/kallsyms | sed 's/^/linux-init: kallsyms /'
fi
if [ "${linux_init:-bench}" = trace ]; then
    # The loop a trace is taken of (linux/trace_loop.py): it starts when a line comes in on the
    # console (once the host has started recording), each fork+execve between two of /bench's
    # ioperm markers (physdev_op hypercalls in the trace), no warm-up.
    echo "linux-init: waiting for the trace to start (a line on the console)"
    read -r started
    /bench --only fork_execve --iterations "${bench_iterations:-3}" --warmup 0 --marker ioperm --exit-program /bin/true
    echo "linux-init: done, status $?"
    poweroff -f
fi
if [ "${linux_init:-bench}" = smp ]; then
    # One fork loop per online CPU at once, each pinned to its CPU (busybox taskset), its
    # output in a file of its own (the console would interleave them); each reports its end.
    # Then the ordinary loop below.
    cpu=0
    while [ "$cpu" -lt "$online" ]; do
        taskset -c "$cpu" /bench --only fork_execve,fork_sh --iterations "${bench_iterations:-1000}" \
            --exit-program /bin/true --shell /bin/sh > "/tmp/loop.$cpu" 2>&1 &
        eval "loop_$cpu=$!"
        cpu=$((cpu + 1))
    done
    echo "linux-init: $online parallel fork loops started"
    cpu=0
    while [ "$cpu" -lt "$online" ]; do
        eval "wait \$loop_$cpu"
        status=$?
        runs=$(grep -c "^bench fork_[a-z]* iterations=${bench_iterations:-1000} " "/tmp/loop.$cpu")
        echo "linux-init: loop $cpu done, status $status, $runs benchmarks, pinned to CPU $cpu"
        cpu=$((cpu + 1))
    done
fi
/bench --only fork_execve,fork_sh --iterations "${bench_iterations:-1000}" --exit-program /bin/true --shell /bin/sh
echo "linux-init: done, status $?"
poweroff -f
"""

# Run by the kernel (orderly_poweroff, for control/shutdown): busybox's poweroff without -f
# would signal an init that is not busybox's.
POWEROFF = """#!/bin/busybox sh
echo "linux-init: powering off (asked by the kernel)"
exec /bin/busybox poweroff -f
"""

DIRECTORY = stat.S_IFDIR | 0o755
EXECUTABLE = stat.S_IFREG | 0o755
CONSOLE = stat.S_IFCHR | 0o600  # a character device (console, /dev/port)
NULL_DEVICE = stat.S_IFCHR | 0o666


def members(busybox, bench, privop):
    with open(busybox, "rb") as f:
        busybox_body = f.read()
    with open(bench, "rb") as f:
        bench_body = f.read()
    with open(privop, "rb") as f:
        privop_body = f.read()
    dirs = [(name, DIRECTORY, b"") for name in ("bin", "dev", "proc", "sbin", "sys", "tmp")]
    return dirs + [
        ("dev/console", CONSOLE, b"", (5, 1)),  # init's stdio before devtmpfs exists
        ("dev/port", CONSOLE, b"", (1, 4)),
        ("dev/null", NULL_DEVICE, b"", (1, 3)),  # the stdin of the shell's background jobs (linux_init=smp)
        ("privop", EXECUTABLE, privop_body),
        ("bin/busybox", EXECUTABLE, busybox_body),
        ("bench", EXECUTABLE, bench_body),
        ("init", EXECUTABLE, INIT.encode()),
        ("sbin/poweroff", EXECUTABLE, POWEROFF.encode()),
    ]


def build(build_dir):
    deps = os.path.join(build_dir, "deps", "linux")
    out_dir = os.path.join(build_dir, "linux")
    os.makedirs(out_dir, exist_ok=True)
    out = os.path.join(out_dir, "initramfs.cpio")
    rootfs = os.path.join(build_dir, "guest", "rootfs")
    data = cpio_newc.write(members(os.path.join(deps, "busybox"), os.path.join(rootfs, "bench"),
                                   os.path.join(rootfs, "privop")))
    # A temporary file of this process's own: tests running at once (ctest -j2) each write it.
    tmp = f"{out}.{os.getpid()}.tmp"
    with open(tmp, "wb") as f:
        f.write(data)
    os.replace(tmp, out)
    return out


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--build", default=os.path.join(ROOT, "build"))
    args = parser.parse_args(argv)
    print(build(os.path.abspath(args.build)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
