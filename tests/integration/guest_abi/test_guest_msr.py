"""selftest=msr (guest/selftest/cpu/selftest_msr.cpp): the MSRs Xen 4.17 serves a PV kernel after the
#GP of its raw rdmsr / wrmsr: the vMCE MSRs Linux's mcheck_cpu_init reads (it panics with "MCA
architectural violation" on a #GP from one), PAT, EFER, APIC_BASE, MISC_ENABLE, the microcode
revision, FEATURE_CONTROL, PLATFORM_INFO, the TSC; reserved bits, read-only and refused MSRs
stay the guest's #GP(0). The same assertions on ours (both ptwr= modes) and on Xen 4.17. (User
mode's rdmsr / wrmsr: test_guest_hostile's init=/hostile.)
"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import guest_boot  # noqa: E402

if __name__ == "__main__":
    guest_boot.selftest_main("msr", 80)
