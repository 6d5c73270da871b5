"""Debian's own Linux PV kernel as dom0 on ours (issue 11), one boot, ptwr=emulate: every boot
milestone in order (linux/run.py MILESTONES: `Linux version`, `Hypervisor detected: Xen PV`,
`console [hvc0] enabled`, `installing Xen timer`, `Run /init`, the busybox /init, the fork
loop's 3 iterations of fork+execve /bin/true and sh -c /bin/true, /init's end, `poweroff -f` ->
the hypervisor's clean shutdown, the frame audit clean). A boot that stops fails with the last
milestone it reached and why: Linux's panic or oops (its RIP symbolized by Linux) and the
hypervisor's report of the guest's fatal trap. A hung boot fails by timeout the same way.
(ptwr=writable: `python3 linux/run.py --hypervisor ours --role dom0 --ptwr writable`.)
"""
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(HERE)), "linux"))
import guest_boot  # noqa: E402
import run as linux_run  # noqa: E402

ITERATIONS = 3


def main():
    build, _ = guest_boot.arguments()
    result = linux_run.boot(build, "ours", ITERATIONS, timeout=240, ptwr="emulate", until=None)
    lines = linux_run.expect_whole_boot(result, "as dom0 on ours", ITERATIONS)
    print("\n".join(lines))
    print(f"ok: Debian's Linux reaches all {len(linux_run.MILESTONES)} milestones as dom0 on ours ({result.seconds:.0f} s)")


if __name__ == "__main__":
    main()
