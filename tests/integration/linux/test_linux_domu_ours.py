"""Debian's own Linux PV kernel as a boot-module domU on ours (issue 11), one boot, ptwr=emulate:
dom0 is the reference guest kernel, d1 Debian's kernel and the project's initramfs with 256 MiB.
Its start_info has `store_evtchn` 0 (Linux never waits for xenstore) and a console page and
event channel that the hypervisor drains (docs/architecture.md, "Domains built at boot"): the
`(d1) ` lines. Every milestone in order (linux/run.py MILESTONES, with `Domain 1 shut down:
reason poweroff`), the fork loop's 3 iterations, the frame audit clean after both domains are
gone. A boot that stops fails with the last milestone it reached and why (Linux's oops, the
hypervisor's `Domain 1 crashed` / unhandled-exception report); a hung one by timeout.
ptwr=writable: the same boot in test_linux_domu_ours_writable.py (check() below, with the mode).
"""
import os
import re
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import guest_boot  # noqa: E402
import machine  # noqa: E402
from linux_guest import linux_run  # noqa: E402

ITERATIONS = 3


def check(mode):
    """Boots Linux as d1 under ptwr=`mode` through every milestone; returns the boot."""
    build, _ = guest_boot.arguments()
    result = linux_run.boot(build, "ours", ITERATIONS, timeout=240, ptwr=mode, until=None, role="domu")
    serial = result.serial
    machine.expect(re.search(r"^\(XEN\) d1: linux 2\.6, 256 MiB, ", serial, re.M) is not None,
                   "the hypervisor did not build Linux as d1 with 256 MiB", result)
    machine.expect("Domain 0 shut down: reason poweroff" in serial, "dom0 (the reference kernel) did not end", result)
    # Linux's console is the ring the hypervisor drains: its lines carry the domain's prefix.
    machine.expect("(d1) [" in serial and "(d1) linux-init: done, status 0" in serial,
                   "Linux's console did not come through the hypervisor's ring as (d1) lines", result)
    lines = linux_run.expect_whole_boot(result, f"as a boot-module domU on ours, ptwr={mode}", ITERATIONS,
                                        linux_run.DOMU_ID)
    print("\n".join(lines))
    print(f"ok: ptwr={mode}: Debian's Linux reaches all {len(linux_run.MILESTONES)} milestones as d1 on ours "
          f"({result.seconds:.0f} s)")
    return result


if __name__ == "__main__":
    check("emulate")
