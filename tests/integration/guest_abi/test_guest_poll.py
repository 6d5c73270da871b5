"""selftest=poll (guest/selftest/events/selftest_poll.cpp): SCHEDOP_poll as Xen 4.17 serves it, the
hypercall Linux's PV spinlock slow path waits in (its xen_poll_irq BUG()s on any error: ours
answered -ENOSYS until Debian's Linux with 4 vCPUs contended a lock, test_linux_smp.py). Bad
counts, requests, port lists and ports; a pending masked port returning at once; timeouts. The
same assertions on ours (both ptwr= modes) and on Xen 4.17.
"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import guest_boot  # noqa: E402

if __name__ == "__main__":
    guest_boot.selftest_main("poll", 19)
