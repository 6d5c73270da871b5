"""Debian's Linux as dom0 on ours under ptwr=writable (issue 11): the boot of
test_linux_dom0_ours.py, every milestone to the clean poweroff and `audit: clean`.

It used to oops in `cryptomgr_test` (a write to a vmalloc address whose PMD read present and
whose PTE read 0): an unhooked L2 entry reads not present, and Linux 6.1 translates a pmd's
frame from machine to pseudo-physical only when it is present, so vmalloc's PTE writes went to
the page whose pfn is the L1's mfn (ptwr/writable_pagetables.h). Linux does not declare that it
reads unhooked entries (our PVHV note), so no L1 of it is ever unhooked: writes to reachable
tables are emulated, tables the running address space cannot reach are still detached.
"""
import os
import re
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import machine  # noqa: E402
import test_linux_dom0_ours  # noqa: E402


def counter(serial, name):
    match = re.search(rf"^\(XEN\)\s+{name}\s+(\d+)\s*$", serial, re.MULTILINE)
    return int(match.group(1)) if match else None


def main():
    result = test_linux_dom0_ours.check("writable")
    unhooks, emulations = counter(result.serial, "ptwr_unhooks"), counter(result.serial, "ptwr_emulations")
    machine.expect(unhooks == 0, f"writable: {unhooks} L1s of Linux unhooked (it reads only present pmds)", result)
    machine.expect(emulations and emulations > 0, f"writable: emulations {emulations}", result)
    print(f"ok: no L1 unhooked, {emulations} writes emulated, detaches {counter(result.serial, 'ptwr_faults')}")


if __name__ == "__main__":
    main()
