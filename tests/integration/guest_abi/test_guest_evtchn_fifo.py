"""selftest=evtchn-fifo (guest/selftest/events/selftest_evtchn_fifo.cpp): the FIFO event-channel ABI as Xen
4.17 serves it: EVTCHNOP_init_control, expand_array and set_priority refusing hostile arguments
(bad vCPU, misaligned or overflowing offsets, XSA-188's bad gfn, page tables, a second call, the
129th page, bad priorities and ports), the control block's frame held writable (pinning it as an
L1 is refused), then real delivery through the queues (HEAD, LINK, READY, masking, priorities,
close) and the kernel's own upcall and timer on FIFO until init exits. The same assertions on ours
(both ptwr= modes) and on Xen 4.17.
"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import guest_boot  # noqa: E402

if __name__ == "__main__":
    guest_boot.selftest_main("evtchn-fifo", 60)
