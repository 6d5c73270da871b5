#include "emulate/instruction_fetch.h"
#include "domain/domain.h"
#include "memory/machine.h"
#include "pv/guest_page_walk.h"

namespace instruction_fetch {
namespace {
constexpr uint64_t kPageBytes = 4096;

// Copies up to `wanted` bytes from `va` to the end of its page; 0 if the page is not
// readable by the guest. Sets `mfn` to the frame read.
size_t copy_within_page(const Vcpu& vcpu, uint64_t va, uint8_t* to, size_t wanted, uint64_t& mfn) {
  const GuestWalk walk = walk_guest(machine::frames(), vcpu.active_table_mfn(), va, false);
  if (!walk.ok) return 0;
  const size_t offset = va & (kPageBytes - 1);
  const size_t piece = wanted < kPageBytes - offset ? wanted : kPageBytes - offset;
  const uint8_t* from = machine::frames().frame(walk.mfn) + offset;
  for (size_t i = 0; i < piece; ++i) to[i] = from[i];
  mfn = walk.mfn;
  return piece;
}
}  // namespace

bool fetch(const Vcpu& vcpu, uint64_t rip, FetchedInstruction& out) {
  out.count = copy_within_page(vcpu, rip, out.bytes, pte_write::kMaxInstructionBytes, out.code_mfn);
  if (out.count == 0) return false;
  if (out.count < pte_write::kMaxInstructionBytes) {
    uint64_t next_mfn = 0;
    out.count += copy_within_page(vcpu, rip + out.count, out.bytes + out.count,
                                  pte_write::kMaxInstructionBytes - out.count, next_mfn);
  }
  return true;
}

}  // namespace instruction_fetch
