"""Debian's Linux with 4 vCPUs as a boot-module domU on ours at -smp 4 with sched_smp=1 (-icount) under
ptwr=writable: the boot and checks of test_linux_smp.py (4 CPUs online, 4 parallel fork loops to
their end, /init done, audit clean)."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import test_linux_smp  # noqa: E402


if __name__ == "__main__":
    test_linux_smp.check("ours", "writable")
