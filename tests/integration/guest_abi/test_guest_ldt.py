"""selftest=ldt (guest/selftest/cpu/selftest_ldt.cpp): MMUEXT_SET_LDT's argument checks as Xen 4.17's
do_mmuext_op makes them (the empty LDT Linux's load_mm_ldt sets, 8192 entries at most, a
page-aligned address outside the hypervisor's range, a batch stopping at a bad one, a foreign
domain that does not exist). The same assertions on ours (both ptwr= modes) and on Xen 4.17.
"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import guest_boot  # noqa: E402

if __name__ == "__main__":
    guest_boot.selftest_main("ldt", 16)
