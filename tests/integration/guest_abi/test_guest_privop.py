"""selftest=privop (guest/selftest/cpu/selftest_privop.cpp): raw rdmsr / wrmsr of the segment bases
from the guest kernel, as Linux's startup_xen does one, performed by the hypervisor after their
#GP and checked through the segments themselves; non-canonical bases and MSRs that are not the
guest's stay its #GP(0). The same assertions on ours (both ptwr= modes) and on Xen 4.17.
"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import guest_boot  # noqa: E402

if __name__ == "__main__":
    guest_boot.selftest_main("privop", 20)
