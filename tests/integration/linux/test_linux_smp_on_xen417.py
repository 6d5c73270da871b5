"""Debian's Linux with 4 vCPUs on real Xen 4.17, the reference for test_linux_smp.py: Xen booted
on a 4-CPU machine by pvhvd (--smp 4), Linux a PV domU through `xl create examples/linux.cfg`
with vcpus=4 (Xen 4.17 on x86 builds no domain but dom0 at boot). The same checks on Linux's
console: 4 CPUs online, 4 parallel fork loops to their end, /init done."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import test_linux_smp  # noqa: E402


if __name__ == "__main__":
    test_linux_smp.check("xen417")
