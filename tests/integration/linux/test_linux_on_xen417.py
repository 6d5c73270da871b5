"""Debian's own Linux PV kernel as dom0 on real Xen 4.17 with the project's initramfs
(linux/initramfs.py, linux/run.py): the reference our hypervisor must meet (issue 11). Linux
boots paravirtualized, /init runs /bench's fork+execve /bin/true and sh -c /bin/true loops
(3 iterations here; `make linux` runs 1000) and reaches its last line. This proves the
pipeline (fetch, bzImage, initramfs, /bench on Linux) on the specification; the same boot on
ours is in `make linux` until it gets that far.
"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import guest_boot  # noqa: E402
import machine  # noqa: E402
from linux_guest import linux_run  # noqa: E402

ITERATIONS = 3


def main():
    build, _ = guest_boot.arguments()
    result = linux_run.boot(build, "xen417", ITERATIONS, timeout=280)
    serial = result.serial
    machine.expect(not result.timed_out, "Linux on Xen 4.17 did not reach the end of /init", result)
    machine.expect("Hypervisor detected: Xen PV" in serial, "Linux did not boot as a Xen PV guest", result)
    machine.expect("linux-init: Linux 6." in serial, "/init did not start", result)
    ok, lines = linux_run.summary("xen417", result)
    machine.expect(ok, "the fork loop did not run: " + "; ".join(lines), result)
    machine.expect("linux-init: done, status 0" in serial, "/bench failed", result)
    for name in ("fork_execve", "fork_sh"):
        machine.expect(f"bench {name} iterations={ITERATIONS} " in serial, f"{name} did not run {ITERATIONS} times", result)
    print("\n".join(lines))
    print("ok: Debian's Linux runs the fork loop as dom0 on Xen 4.17")


if __name__ == "__main__":
    main()
