// The writable_pagetables VM assist (selftest=mmu as dom0, selftest=unprivileged as a domU):
// Xen takes over a kernel's plain store to its own L1 table only for a domain that enabled
// VMASST_TYPE_writable_pagetables (traps.c: VM_ASSIST(d, writable_pagetables)); without it a
// domU's store is bounced as a page fault. The hardware domain is served either way: its
// write faults on present pages go to pv_ro_page_fault for the read-only MMIO ranges, and
// that emulates page-table writes too. The kernel enables the assist at boot
// (pv::vm_assists_install); here it is switched off for one store and back on.
#include "selftest/memory/selftest_ptwr_assist.h"

#include "pv-kernel-patches/callbacks.h"
#include "arch/xen.h"
#include "kernel/boot/boot_info.h"
#include "arch/probe.h"
#include "selftest/selftest_page_tables.h"

namespace kernel {
namespace {
alignas(4096) uint8_t assist_scratch_page[4096];
}  // namespace

void check_ptwr_assist(SelfTest& test) {
  pv::PageTableSlot slot;
  if (!walk(kernel_l4(), reinterpret_cast<uint64_t>(assist_scratch_page), Level::l1, slot)) {
    test.check("the scratch page's L1 entry was found", 0, 1);
    return;
  }
  const bool privileged = boot_info.start_info->flags & SIF_PRIVILEGED;
  const uint64_t before = read_entry(slot).raw();
  test.check("vm_assist disable writable_pagetables",
             xen::vm_assist(VMASST_CMD_disable, VMASST_TYPE_writable_pagetables), 0);
  long faulted = probe_store64(slot.kernel_va, before);
  page_table_tests::empty_mmuext_op();  // a detached table is validated again
  test.check(privileged ? "without the assist dom0's plain store to its L1 is still emulated"
                        : "without the assist a domU's plain store to its L1 faults",
             faulted, privileged ? 0 : 1);
  test.check("  the entry is unchanged", static_cast<long>(read_entry(slot).raw() == before), 1);
  pv::vm_assists_install();
  test.check("with the assist again the store is taken over", probe_store64(slot.kernel_va, before), 0);
  page_table_tests::empty_mmuext_op();
  test.check("  the entry is unchanged", static_cast<long>(read_entry(slot).raw() == before), 1);
}

}  // namespace kernel
