// selftest=iomem: run in dom0, which holds I/O-memory permission for everything below the
// machine's address width except the interrupt hardware the hypervisor keeps for itself.
// Xen 4.17 (dom0_setup_permissions in xen/arch/x86/dom0_build.c) denies dom0 the local APIC
// page, the MSI address range 0xfee00000-0xfeefffff and every IO-APIC page that is not in
// its read-only MMIO set; an L1 entry naming a denied frame fails in get_page_from_l1e with
// -EPERM ("non-privileged attempt to map MMIO space"). Any other frame outside RAM is
// accepted. Each mmu_update here rewrites the L1 slot of a scratch page of the image; an
// accepted one is undone at once.
#include "arch/xen.h"
#include "kernel/memory/physical_memory.h"
#include "arch/probe.h"
#include "selftest/memory/memory_selftests.h"

namespace kernel {
namespace {
constexpr uint64_t kReadOnly = PageTableEntry::kPresent | PageTableEntry::kAccessed;
constexpr uint64_t kWritable = kReadOnly | PageTableEntry::kWritable | PageTableEntry::kDirty;

constexpr uint64_t kLocalApicFrame = 0xfee00;  // the architectural default of IA32_APIC_BASE
constexpr uint64_t kMsiFirstFrame = 0xfee00, kMsiLastFrame = 0xfeeff;
constexpr uint64_t kIoApicFrame = 0xfec00;  // the PC's first IO-APIC

uint64_t entry(uint64_t mfn, uint64_t flags) { return PageTableEntry::make(Mfn{mfn}, flags).raw(); }

void denied_frames(SelfTest& test) {
  pv::PageTableSlot slot = scratch_slot();
  try_update(test, "map the local APIC page read-only is refused", slot, entry(kLocalApicFrame, kReadOnly), -XEN_EPERM);
  try_update(test, "map the local APIC page writable is refused", slot, entry(kLocalApicFrame, kWritable), -XEN_EPERM);
  try_update(test, "map the second page of the MSI range is refused", slot, entry(kMsiFirstFrame + 1, kWritable),
             -XEN_EPERM);
  try_update(test, "map the last page of the MSI range is refused", slot, entry(kMsiLastFrame, kReadOnly), -XEN_EPERM);
}

// An accepted update whose stored entry is noted and checked read-only or not, then undone.
void try_mapping(SelfTest& test, const char* what, const pv::PageTableSlot& slot, uint64_t value,
                 bool stored_writable) {
  uint64_t before = read_entry(slot).raw();
  test.check(what, pv::ops.raw_mmu_update(slot.machine_address, value), 0);
  PageTableEntry stored = read_entry(slot);
  test.note("... the entry stored", static_cast<long>(stored.raw()));
  test.check("... maps the frame asked for", static_cast<long>(stored.mfn().value == PageTableEntry(value).mfn().value),
             1);
  test.check("... writable", static_cast<long>(stored.writable()), stored_writable);
  test.check("... undone", pv::ops.raw_mmu_update(slot.machine_address, before), 0);
}

// The IO-APIC's page is read-only MMIO (Xen's mmio_ro_ranges, filled by ioapic_init_mappings):
// dom0 may map it, and a writable mapping is silently made read-only (get_page_from_l1e
// clears _PAGE_RW), so dom0 can read the IO-APIC's registers but never program it.
void read_only_frames(SelfTest& test) {
  pv::PageTableSlot slot = scratch_slot();
  try_mapping(test, "map the IO-APIC page read-only is accepted", slot, entry(kIoApicFrame, kReadOnly), false);
  try_mapping(test, "map the IO-APIC page writable is accepted", slot, entry(kIoApicFrame, kWritable), false);
}

// The same through plain stores into the page table, which the hypervisor emulates or (with
// writable pagetables) re-validates on reattach: Xen's ptwr emulation takes the same
// get_page_from_l1e decisions. Any MMU hypercall (here a local flush) settles the table.
void direct_stores(SelfTest& test) {
  pv::PageTableSlot slot = scratch_slot();
  uint64_t before = read_entry(slot).raw();
  probe_store64(slot.kernel_va, entry(kLocalApicFrame, kWritable));
  pv::ops.raw_mmuext(MMUEXT_TLB_FLUSH_LOCAL, 0);
  test.check("a plain store mapping the local APIC never takes effect",
             static_cast<long>(read_entry(slot).raw() == before), 1);
  long faulted = probe_store64(slot.kernel_va, entry(kIoApicFrame, kWritable));
  pv::ops.raw_mmuext(MMUEXT_TLB_FLUSH_LOCAL, 0);
  PageTableEntry stored = read_entry(slot);
  test.check("a plain store mapping the IO-APIC writable is accepted", faulted, 0);
  test.check("... read-only", static_cast<long>(stored.mfn().value == kIoApicFrame && !stored.writable()), 1);
  test.check("... undone", pv::ops.raw_mmu_update(slot.machine_address, before), 0);
}

void permitted_frames(SelfTest& test) {
  pv::PageTableSlot slot = scratch_slot();
  // Just outside the MSI range, and well beyond RAM: I/O memory dom0 may map.
  try_update(test, "map the frame after the MSI range is accepted", slot, entry(kMsiLastFrame + 1, kReadOnly), 0);
  try_update(test, "map the frame before the MSI range is accepted", slot, entry(kMsiFirstFrame - 1, kReadOnly), 0);
}
}  // namespace

void selftest_iomem(SelfTest& test) {
  denied_frames(test);
  read_only_frames(test);
  direct_stores(test);
  permitted_frames(test);
}

}  // namespace kernel
