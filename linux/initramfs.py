"""The initramfs of the Linux guest: Debian's busybox-static, the project's /bench (the same
fork benchmarks the reference guest runs, built static with musl: they run on Linux too) and
an /init that runs the fork loop and powers off.

    python3 linux/initramfs.py --build build            # writes build/linux/initramfs.cpio

/init reads `bench_iterations=N` from the kernel command line (Linux hands unknown key=value
words to init as its environment): 1000 in `make linux` and `make bench`, a few in `make test`.
"""
import argparse
import os
import stat
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tests", "integration"))
import cpio_newc  # noqa: E402

INIT = """#!/bin/busybox sh
# /init of the Linux guest (linux/initramfs.py): fork+execve /bin/true and sh -c /bin/true,
# timed by /bench, then power off.
/bin/busybox mount -t proc proc /proc
/bin/busybox mount -t sysfs sysfs /sys
/bin/busybox --install -s /bin
echo "linux-init: Linux $(uname -r) up, $(grep -c ^processor /proc/cpuinfo) CPU, $(grep MemTotal /proc/meminfo)"
/bench --only fork_execve,fork_sh --iterations "${bench_iterations:-1000}" --exit-program /bin/true --shell /bin/sh
echo "linux-init: done, status $?"
poweroff -f
"""

DIRECTORY = stat.S_IFDIR | 0o755
EXECUTABLE = stat.S_IFREG | 0o755
CONSOLE = stat.S_IFCHR | 0o600


def members(busybox, bench):
    with open(busybox, "rb") as f:
        busybox_body = f.read()
    with open(bench, "rb") as f:
        bench_body = f.read()
    dirs = [(name, DIRECTORY, b"") for name in ("bin", "dev", "proc", "sys", "tmp")]
    return dirs + [
        ("dev/console", CONSOLE, b"", (5, 1)),  # init's stdio before devtmpfs exists
        ("bin/busybox", EXECUTABLE, busybox_body),
        ("bench", EXECUTABLE, bench_body),
        ("init", EXECUTABLE, INIT.encode()),
    ]


def build(build_dir):
    deps = os.path.join(build_dir, "deps", "linux")
    out_dir = os.path.join(build_dir, "linux")
    os.makedirs(out_dir, exist_ok=True)
    out = os.path.join(out_dir, "initramfs.cpio")
    data = cpio_newc.write(members(os.path.join(deps, "busybox"), os.path.join(build_dir, "guest", "rootfs", "bench")))
    with open(out + ".tmp", "wb") as f:
        f.write(data)
    os.replace(out + ".tmp", out)
    return out


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--build", default=os.path.join(ROOT, "build"))
    args = parser.parse_args(argv)
    print(build(os.path.abspath(args.build)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
