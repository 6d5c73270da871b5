#include "mm/descriptor_rules.h"
#include "abi/xen_abi.h"

namespace mm {
namespace {
constexpr uint32_t segment_type = 15u << 8;
constexpr uint32_t segment_s = 1u << 12;  // code or data (not a system descriptor)
constexpr uint32_t segment_dpl = 3u << 13;
constexpr uint32_t segment_present = 1u << 15;
constexpr uint32_t call_gate_64 = 0xcu << 8;
constexpr unsigned guest_kernel_rpl = 3;
constexpr unsigned first_reserved_entry = 14 * 4096 / 8;  // FIRST_RESERVED_GDT_ENTRY
constexpr uint16_t flat_kernel_cs = 0xe033;               // FLAT_KERNEL_CS64

// Xen's guest_gate_selector_okay for a 64-bit guest.
bool gate_target_allowed(uint16_t selector) {
  return (selector >> 3) < first_reserved_entry || selector == flat_kernel_cs || (selector & 4);
}
}  // namespace

bool check_descriptor(uint64_t& descriptor) {
  uint32_t low = uint32_t(descriptor), high = uint32_t(descriptor >> 32);
  if (!(high & segment_present)) return true;
  unsigned dpl = (high >> 13) & 3;
  if (dpl < guest_kernel_rpl) dpl = guest_kernel_rpl;
  high = (high & ~segment_dpl) | (dpl << 13);
  if (!(high & segment_s)) {
    if ((high & segment_type) == 0) return true;  // the upper half of a gate: harmless
    if ((high & segment_type) != call_gate_64) return false;
    uint16_t target = uint16_t(low >> 16);
    if (!gate_target_allowed(target)) return false;
    high &= ~segment_dpl;  // DPL 0: using the gate faults, and the fault can be emulated
    target = uint16_t((target & ~3u) | dpl);
    low = (low & 0xffffu) | (uint32_t(target) << 16);
    if (high & 0xffu) return false;  // reserved bits
  }
  descriptor = (uint64_t(high) << 32) | low;
  return true;
}

bool check_descriptor_frame(uint64_t* descriptors) {
  for (unsigned i = 0; i < kDescriptorsPerFrame; ++i) {
    uint64_t descriptor = __atomic_load_n(&descriptors[i], __ATOMIC_RELAXED);
    if (!check_descriptor(descriptor)) return false;
    __atomic_store_n(&descriptors[i], descriptor, __ATOMIC_RELAXED);
  }
  return true;
}
}  // namespace mm
