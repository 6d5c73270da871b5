#include "pv/instruction_fetch.h"
#include "domain/guest_memory.h"

namespace instruction_fetch {
namespace {
constexpr uint64_t kPageBytes = 4096;
}  // namespace

// Directly on the guest's page tables, as every other guest access (domain/guest_memory): the MMU
// walks them, a fault in the copy is caught by its fixup. The bytes up to the end of rip's
// page first, then the rest from the next page if it is readable.
bool fetch(const Vcpu& vcpu, uint64_t rip, FetchedInstruction& out) {
  const size_t to_page_end = kPageBytes - (rip & (kPageBytes - 1));
  const size_t first = to_page_end < pte_write::kMaxInstructionBytes ? to_page_end : pte_write::kMaxInstructionBytes;
  if (!guest_memory::copy_from(vcpu, out.bytes, rip, first)) return false;
  out.count = first;
  const size_t rest = pte_write::kMaxInstructionBytes - first;
  if (rest && guest_memory::copy_from(vcpu, out.bytes + first, rip + first, rest)) out.count += rest;
  return true;
}

}  // namespace instruction_fetch
