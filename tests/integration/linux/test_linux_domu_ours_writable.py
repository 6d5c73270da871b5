"""Debian's Linux as a boot-module domU on ours under ptwr=writable (issue 11): the boot of
test_linux_domu_ours.py (the reference guest kernel as dom0, Linux as d1 with 256 MiB), every
milestone to d1's clean poweroff and `audit: clean` after both domains, the fork loop's 3
iterations.

Linux does not declare that it reads unhooked entries (our PVHV note), so none of its L1s is
unhooked: its writes to tables the running address space reaches are emulated as under
emulate, tables it cannot reach (a fork child's) are detached (ptwr/writable_pagetables.h).
"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import test_linux_domu_ours  # noqa: E402


if __name__ == "__main__":
    test_linux_domu_ours.check("writable")
