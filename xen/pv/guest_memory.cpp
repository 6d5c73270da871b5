#include "pv/guest_memory.h"
#include "domain/domain.h"
#include "memory/machine.h"
#include "pv/guest_page_walk.h"

namespace guest_memory {
namespace {
constexpr uint64_t page_size = 4096;

// Calls visit(host pointer, length) for each page-sized piece of [va, va + length).
template <typename Visit>
bool for_each_piece(const Vcpu& vcpu, uint64_t va, size_t length, bool write, Visit visit) {
  if (va + length < va) return false;
  while (length) {
    GuestWalk walk = walk_guest(machine::frames(), vcpu.active_table_mfn(), va, write);
    if (!walk.ok) return false;
    size_t offset = va & (page_size - 1);
    size_t piece = page_size - offset;
    if (piece > length) piece = length;
    visit(machine::frames().base + (walk.mfn << 12) + offset, piece);
    va += piece;
    length -= piece;
  }
  return true;
}
}  // namespace

bool copy_from(const Vcpu& vcpu, void* to, uint64_t guest_va, size_t length) {
  auto* out = static_cast<uint8_t*>(to);
  return for_each_piece(vcpu, guest_va, length, false, [&](uint8_t* p, size_t n) {
    __builtin_memcpy(out, p, n);
    out += n;
  });
}

bool copy_to(const Vcpu& vcpu, uint64_t guest_va, const void* from, size_t length) {
  auto* in = static_cast<const uint8_t*>(from);
  return for_each_piece(vcpu, guest_va, length, true, [&](uint8_t* p, size_t n) {
    __builtin_memcpy(p, in, n);
    in += n;
  });
}
}  // namespace guest_memory
