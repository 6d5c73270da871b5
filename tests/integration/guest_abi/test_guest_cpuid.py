"""selftest=cpuid (guest/selftest/cpu/selftest_cpuid.cpp): Xen's forced-emulation CPUID from the guest
kernel (`ud2; .ascii "xen"; cpuid`, as Linux's xen_cpuid), answered with Xen 4.17's PV policy:
the hypervisor leaves, the HYPERVISOR bit, hidden VMX/MONITOR, zeros for unknown leaves; the
prefix before anything but cpuid stays #UD. The same assertions on ours (both ptwr= modes) and
on Xen 4.17.
"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import guest_boot  # noqa: E402

if __name__ == "__main__":
    guest_boot.selftest_main("cpuid", 40)
