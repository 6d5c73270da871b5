"""selftest=time-area (guest/selftest/events/selftest_time_area.cpp): VCPUOP_register_vcpu_time_memory_area
as Xen 4.17 serves it (Linux's vDSO pvclock page): the second vcpu_time_info written at once and
whole, with vcpu_info's scale; areas starting outside the guest's part and unreadable arguments
-EFAULT; areas running into the hole, an unmapped address and 0 accepted; another vCPU -ENOENT. The same assertions on ours (both
ptwr= modes) and on Xen 4.17.
"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import guest_boot  # noqa: E402

if __name__ == "__main__":
    guest_boot.selftest_main("time-area", 14)
