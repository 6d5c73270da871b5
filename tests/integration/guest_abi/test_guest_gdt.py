"""selftest=gdt (guest/selftest/cpu/selftest_gdt.cpp): HYPERVISOR_set_gdt and update_descriptor as Xen
4.17 serves them: descriptor frames only without writable mappings, descriptors checked (DPL
raised to 3, system descriptors other than call gates refused), a selector of the new GDT loads;
bad lists, too many entries, page tables and foreign frames refused. The same assertions on ours
(both ptwr= modes) and on Xen 4.17.
"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import guest_boot  # noqa: E402

if __name__ == "__main__":
    guest_boot.selftest_main("gdt", 20)
