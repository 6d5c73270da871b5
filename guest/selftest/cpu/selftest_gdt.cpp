// selftest=gdt: HYPERVISOR_set_gdt and HYPERVISOR_update_descriptor as Xen 4.17's
// pv/descriptor-tables.c serves them (Linux's xen_load_gdt_boot is the first caller): a frame
// becomes a descriptor frame only when no writable mapping of it exists and every descriptor
// in it is one a PV guest may have; a descriptor written through update_descriptor has its
// DPL raised to 3; a system descriptor other than a call gate is refused; a selector of the
// new GDT loads. Bad lists, too many entries, page tables and frames not the caller's are
// -EINVAL or -EFAULT, and change nothing. The same checks run on Xen 4.17.
#include "arch/hypercall.h"
#include "arch/xen.h"
#include "kernel/memory/physical_memory.h"
#include "selftest/cpu/cpu_selftests.h"

namespace kernel {
namespace {
alignas(4096) uint64_t gdt_page[512];    // the GDT frame (its mapping made read-only)
alignas(4096) uint64_t plain_page[512];  // ordinary writable memory

constexpr uint64_t kReadOnly = PageTableEntry::kPresent | PageTableEntry::kAccessed;
constexpr uint64_t kWritable = kReadOnly | PageTableEntry::kWritable | PageTableEntry::kDirty;
constexpr uint64_t kCode64Dpl0 = 0x00af9a000000ffffull;
constexpr uint64_t kCode64Dpl3 = 0x00affa000000ffffull;
constexpr uint64_t kData32Dpl3 = 0x00cff2000000ffffull;
constexpr uint64_t kInterruptGate = 0x00008e0000100000ull;
constexpr uint64_t kTss = 0x0000890000000067ull;
constexpr long kEinval = -22, kEfault = -14;

long set_gdt(const uint64_t* frames, uint64_t entries) {
  return arch::hypercall(__HYPERVISOR_set_gdt, reinterpret_cast<uint64_t>(frames), entries);
}
long update_descriptor(uint64_t maddr, uint64_t descriptor) {
  return arch::hypercall(__HYPERVISOR_update_descriptor, maddr, descriptor);
}

pv::PageTableSlot slot_of(const void* va) {
  pv::PageTableSlot slot;
  walk(kernel_l4(), reinterpret_cast<uint64_t>(va), Level::l1, slot);
  return slot;
}

uint16_t load_ds(uint16_t selector) {
  uint16_t now;
  asm volatile("mov %1, %%ds\n mov %%ds, %0" : "=r"(now) : "r"(selector) : "memory");
  return now;
}
}  // namespace

void selftest_gdt(SelfTest& test) {
  const Mfn frame = va_to_mfn(reinterpret_cast<uint64_t>(gdt_page));
  const uint64_t frames[1] = {frame.value};
  const pv::PageTableSlot slot = slot_of(gdt_page);
  for (uint64_t& descriptor : gdt_page) descriptor = 0;

  test.check("set_gdt of a frame mapped writable is -EINVAL", set_gdt(frames, 512), kEinval);
  test.check("its mapping made read-only",
             pv::ops.raw_mmu_update(slot.machine_address, PageTableEntry::make(frame, kReadOnly).raw()), 0);
  test.check("set_gdt of more than FIRST_RESERVED_GDT_ENTRY entries is -EINVAL", set_gdt(frames, 14 * 512 + 1),
             kEinval);
  test.check("set_gdt with an unreadable frame list is -EFAULT",
             arch::hypercall(__HYPERVISOR_set_gdt, 0x8000000000000000ull, 512), kEfault);
  const uint64_t l4[1] = {kernel_l4().value};
  test.check("set_gdt of a page table (the kernel's L4) is -EINVAL", set_gdt(l4, 512), kEinval);
  test.check("set_gdt of a frame beyond memory is -EINVAL",
             set_gdt(reinterpret_cast<const uint64_t*>("\xff\xff\xff\xff\xff\xff\xff\x0f"), 512), kEinval);
  test.check("set_gdt of the read-only frame works", set_gdt(frames, 512), 0);
  test.check("a writable mapping of a GDT frame is refused",
             pv::ops.raw_mmu_update(slot.machine_address, PageTableEntry::make(frame, kWritable).raw()) != 0, true);

  const uint64_t maddr = frame.machine_address();
  test.check("update_descriptor at an unaligned address is -EINVAL", update_descriptor(maddr + 6 * 8 + 1, kCode64Dpl0),
             kEinval);
  test.check("update_descriptor of a DPL-0 code segment works", update_descriptor(maddr + 6 * 8, kCode64Dpl0), 0);
  test.check("and its DPL was raised to 3", gdt_page[6] == kCode64Dpl3, true);
  test.check("update_descriptor of an interrupt gate is -EINVAL", update_descriptor(maddr + 7 * 8, kInterruptGate),
             kEinval);
  test.check("update_descriptor of a TSS is -EINVAL", update_descriptor(maddr + 7 * 8, kTss), kEinval);
  test.check("and the slot stayed empty", gdt_page[7], 0);
  test.check("update_descriptor of a DPL-3 data segment works", update_descriptor(maddr + 5 * 8, kData32Dpl3), 0);
  test.check("its selector loads into DS", load_ds(0x2b), 0x2b);
  load_ds(0);
  const uint64_t frame_l4 = kernel_l4().machine_address();
  test.check("update_descriptor into a page table is -EINVAL", update_descriptor(frame_l4 + 8, kData32Dpl3), kEinval);

  test.check("set_gdt of no entries releases the frame", set_gdt(nullptr, 0), 0);
  test.check("and its mapping can be writable again",
             pv::ops.raw_mmu_update(slot.machine_address, PageTableEntry::make(frame, kWritable).raw()), 0);
  const uint64_t plain = va_to_mfn(reinterpret_cast<uint64_t>(plain_page)).machine_address();
  test.check("update_descriptor into ordinary writable memory works", update_descriptor(plain + 8, kData32Dpl3), 0);
  test.check("and wrote the descriptor", plain_page[1] == kData32Dpl3, true);
  test.check("update_descriptor of a refused descriptor there is -EINVAL", update_descriptor(plain + 16, kTss),
             kEinval);
}
}  // namespace kernel
