"""Debian's own Linux PV kernel as dom0 on ours (issue 11), one boot, ptwr=emulate: every boot
milestone in order (linux/run.py MILESTONES: `Linux version`, `Hypervisor detected: Xen PV`,
`console [hvc0] enabled`, `installing Xen timer`, `Run /init`, the busybox /init, the fork
loop's 3 iterations of fork+execve /bin/true and sh -c /bin/true, /init's end, `poweroff -f` ->
the hypervisor's clean shutdown, the frame audit clean). A boot that stops fails with the last
milestone it reached and why: Linux's panic or oops (its RIP symbolized by Linux) and the
hypervisor's report of the guest's fatal trap. A hung boot fails by timeout the same way.
ptwr=writable: the same boot in test_linux_dom0_ours_writable.py (check() below, with the mode).
"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import guest_boot  # noqa: E402
from linux_guest import linux_run  # noqa: E402

ITERATIONS = 3


def check(mode):
    """Boots Linux as dom0 under ptwr=`mode` through every milestone; returns the serial output."""
    build, _ = guest_boot.arguments()
    result = linux_run.boot(build, "ours", ITERATIONS, timeout=240, ptwr=mode, until=None)
    lines = linux_run.expect_whole_boot(result, f"as dom0 on ours, ptwr={mode}", ITERATIONS)
    print("\n".join(lines))
    print(f"ok: ptwr={mode}: Debian's Linux reaches all {len(linux_run.MILESTONES)} milestones as dom0 on ours "
          f"({result.seconds:.0f} s)")
    return result


if __name__ == "__main__":
    check("emulate")
