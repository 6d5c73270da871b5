"""selftest=ipi (guest/selftest/events/selftest_ipi.cpp): EVTCHNOP_bind_ipi as Xen 4.17 serves it, the four
IPI ports Linux's xen_smp_intr_init binds on one vCPU, self-sends delivered to it, status, close,
a vCPU the domain does not have (-ENOENT) and an unreadable request (-EFAULT). The same
assertions on ours (both ptwr= modes) and on Xen 4.17.
"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import guest_boot  # noqa: E402

if __name__ == "__main__":
    guest_boot.selftest_main("ipi", 20)
