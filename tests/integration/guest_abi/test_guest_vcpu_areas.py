"""selftest=vcpu-areas (guest/selftest/events/selftest_vcpu_areas.cpp): VCPUOP_register_runstate_memory_area
and VCPUOP_register_vcpu_info as Xen 4.17 serves them (the areas written at once and kept up to
date, bad offsets, page tables, foreign frames, hypervisor addresses and a second registration
refused), after which the kernel runs to its end on the moved vcpu_info. The same assertions on
ours (both ptwr= modes) and on Xen 4.17.
"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import guest_boot  # noqa: E402

if __name__ == "__main__":
    guest_boot.selftest_main("vcpu-areas", 15)
