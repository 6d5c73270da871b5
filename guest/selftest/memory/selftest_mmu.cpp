// selftest=mmu: the page-type rules of the PV MMU. Every refused update must leave the entry
// unchanged; updates Xen accepts are undone right away.
#include "arch/xen.h"
#include "kernel/memory/direct_map.h"
#include "kernel/memory/physical_memory.h"
#include "selftest/memory/selftest_ptwr_assist.h"
#include "selftest/memory/memory_selftests.h"
#include "common/format.h"

namespace kernel {
namespace {

// A page of the image whose L1 slot the checks try to rewrite.
alignas(4096) uint8_t scratch_page[4096];

constexpr uint64_t kReadOnly = PageTableEntry::kPresent | PageTableEntry::kAccessed;
constexpr uint64_t kWritable = kReadOnly | PageTableEntry::kWritable | PageTableEntry::kDirty;

}  // namespace

// Tries `value` in `slot`, expects `expected`, and checks the slot afterwards: unchanged if
// refused, restored if accepted.
void try_update(SelfTest& test, const char* what, const pv::PageTableSlot& slot, uint64_t value, long expected) {
  uint64_t before = read_entry(slot).raw();
  long rc = pv::ops.raw_mmu_update(slot.machine_address, value);
  test.check(what, rc, expected);
  char label[160];
  if (rc == 0) {
    format_to(label, sizeof(label), "%s: original entry restored", what);
    test.check(label, pv::ops.raw_mmu_update(slot.machine_address, before), 0);
    return;
  }
  format_to(label, sizeof(label), "%s: entry unchanged", what);
  test.check(label, static_cast<long>(read_entry(slot).raw() == before), 1);
}

uint64_t scratch_va() { return reinterpret_cast<uint64_t>(scratch_page); }

pv::PageTableSlot scratch_slot() {
  pv::PageTableSlot slot;
  walk(kernel_l4(), scratch_va(), Level::l1, slot);
  return slot;
}

namespace {

Mfn scratch_l1_table() {
  pv::PageTableSlot l2;
  walk(kernel_l4(), scratch_va(), Level::l2, l2);
  return read_entry(l2).mfn();
}

// A frame of the hypervisor's own: the L3 behind the first hypervisor slot of our L4.
Mfn hypervisor_frame() {
  for (unsigned index = 256; index < 272; ++index) {
    PageTableEntry entry = read_entry(table_slot(kernel_l4(), index, Level::l4));
    if (entry.present()) return entry.mfn();
  }
  return Mfn{0};
}

// A RAM frame that is not ours (free, or the hypervisor's): its M2P entry does not lead
// back to it through our p2m.
Mfn foreign_ram_frame(uint64_t max_ram_page) {
  for (uint64_t mfn = max_ram_page - 1; mfn > max_ram_page - 4096; --mfn) {
    uint64_t pfn = machine_to_phys_mapping[mfn];
    if (pfn >= boot_info.nr_pages || boot_info.p2m[pfn] != mfn) return Mfn{mfn};
  }
  return Mfn{0};
}

void page_table_rules(SelfTest& test) {
  pv::PageTableSlot slot = scratch_slot();
  // Xen 4.17 answers -EBUSY: the frame cannot take the writable type while it has a
  // page-table type (get_page_type fails, reported as "could not pin").
  try_update(test, "map own L4 writable is refused", slot, PageTableEntry::make(kernel_l4(), kWritable).raw(),
             -XEN_EBUSY);
  try_update(test, "map own L1 writable is refused", slot, PageTableEntry::make(scratch_l1_table(), kWritable).raw(),
             -XEN_EBUSY);
  try_update(test, "map own L4 read-only is allowed", slot, PageTableEntry::make(kernel_l4(), kReadOnly).raw(), 0);
}

void reserved_bits(SelfTest& test) {
  pv::PageTableSlot slot = scratch_slot();
  uint64_t original = read_entry(slot).raw();
  try_update(test, "L1 entry with address bits 51:40 set is refused", slot, original | (0xfffull << 40), -XEN_EPERM);
  // Bits 62:52 are available to software in hardware terms and Xen 4.17 accepts them in an
  // L1 entry (only the address bits above the machine's width are refused, as -EPERM:
  // Xen sees a frame outside RAM and the I/O range dom0 may map).
  try_update(test, "L1 entry with software-available bit 62 is accepted", slot, original | (1ull << 62), 0);
  // A 2 MiB superpage in an unused slot of the kernel's L2 (PV guests may not map those).
  pv::PageTableSlot l2;
  walk(kernel_l4(), kVirtBase + (1ull << 30) - (2ull << 20), Level::l2, l2);
  try_update(test, "L2 superpage entry is refused", l2,
             PageTableEntry::make(va_to_mfn(scratch_va()), kWritable | PageTableEntry::kLarge).raw(), -XEN_EINVAL);
}

void foreign_frames(SelfTest& test) {
  pv::PageTableSlot slot = scratch_slot();
  long max_ram_page = xen::memory_op(XENMEM_maximum_ram_page, nullptr);
  test.note("XENMEM_maximum_ram_page", max_ram_page);
  // Past the end of RAM is I/O space as far as Xen is concerned, and dom0 holds I/O-memory
  // access to everything below the machine's address width: Xen 4.17 accepts the mapping.
  try_update(test, "map a frame beyond the end of RAM (dom0 I/O space) is accepted", slot,
             PageTableEntry::make(Mfn{static_cast<uint64_t>(max_ram_page) + 0x100000}, kReadOnly).raw(), 0);
  Mfn xen_frame = hypervisor_frame();
  test.note("hypervisor frame (L3 behind the first Xen L4 slot)", static_cast<long>(xen_frame.value));
  try_update(test, "map a hypervisor frame is refused", slot, PageTableEntry::make(xen_frame, kReadOnly).raw(),
             -XEN_EBUSY);
  Mfn foreign = foreign_ram_frame(static_cast<uint64_t>(max_ram_page));
  test.note("RAM frame owned by no one", static_cast<long>(foreign.value));
  try_update(test, "map a frame owned by no one is refused", slot, PageTableEntry::make(foreign, kReadOnly).raw(),
             -XEN_EBUSY);
}

void pinning(SelfTest& test) {
  test.check("pin the already pinned kernel L4 is refused", pv::ops.raw_mmuext(MMUEXT_PIN_L4_TABLE, kernel_l4().value),
             -XEN_EINVAL);
  test.check("unpin a frame that is not pinned is refused",
             pv::ops.raw_mmuext(MMUEXT_UNPIN_TABLE, va_to_mfn(scratch_va()).value), -XEN_EINVAL);
  test.check("pin a writable-mapped data frame as L1 is refused",
             pv::ops.raw_mmuext(MMUEXT_PIN_L1_TABLE, va_to_mfn(scratch_va()).value), -XEN_EINVAL);
  test.check("pin an in-use L1 table as L2 is refused",
             pv::ops.raw_mmuext(MMUEXT_PIN_L2_TABLE, scratch_l1_table().value), -XEN_EINVAL);
  Mfn fresh = new_page_table_frame();
  test.check("pin a fresh read-only frame as L1", pv::ops.raw_mmuext(MMUEXT_PIN_L1_TABLE, fresh.value), 0);
  test.check("pin it again is refused", pv::ops.raw_mmuext(MMUEXT_PIN_L1_TABLE, fresh.value), -XEN_EINVAL);
  test.check("unpin it", pv::ops.raw_mmuext(MMUEXT_UNPIN_TABLE, fresh.value), 0);
  test.check("unpin it again is refused", pv::ops.raw_mmuext(MMUEXT_UNPIN_TABLE, fresh.value), -XEN_EINVAL);
}

}  // namespace

void selftest_mmu(SelfTest& test) {
  page_table_rules(test);
  reserved_bits(test);
  foreign_frames(test);
  pinning(test);
  check_ptwr_assist(test);
}

}  // namespace kernel
