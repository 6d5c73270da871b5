#include "memory/hypervisor_page_tables.h"
#include "arch/x86/cpu/registers.h"
#include "arch/x86/layout.h"
#include "memory/machine.h"
#include "mm/page_table_entry.h"

extern "C" uint64_t boot_pml4[512];

namespace hypervisor_page_tables {
namespace {
constexpr uint64_t present = 1, writable = 2, user = 4;

constexpr unsigned index_at(uint64_t va, int level) { return (va >> (12 + 9 * (level - 1))) & 511; }

uint64_t* next_table(uint64_t* table, unsigned index, uint64_t leaf_flags, FrameSource new_frame) {
  uint64_t& entry = table[index];
  if (!(entry & present)) {
    uint64_t mfn = new_frame();
    if (!mfn) return nullptr;
    entry = (mfn << 12) | present | writable;
  }
  entry |= leaf_flags & user;
  return machine::to_virtual<uint64_t>(entry & mm::PageTableEntry::kAddressMask);
}
}  // namespace

uint64_t* l4() { return boot_pml4; }

bool map(uint64_t va, uint64_t mfn, uint64_t pages, uint64_t flags, FrameSource new_frame) {
  for (uint64_t i = 0; i < pages; ++i, va += 4096) {
    uint64_t* table = boot_pml4;
    for (int level = 4; level > 1 && table; --level) table = next_table(table, index_at(va, level), flags, new_frame);
    if (!table) return false;
    table[index_at(va, 1)] = ((mfn + i) << 12) | flags | present;
  }
  cpu::flush_tlb_local();
  return true;
}

void drop_identity_map() {
  boot_pml4[0] = 0;
  cpu::flush_tlb_local();
}
}  // namespace hypervisor_page_tables
