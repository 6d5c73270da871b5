#include "control/vcpu_affinity.h"

namespace control {
uint32_t bitmap_read_bytes(uint32_t nr_bits, uint32_t nr_cpu_ids) {
  uint32_t guest = uint32_t((uint64_t(nr_bits) + 7) / 8), ours = (nr_cpu_ids + 7) / 8;
  return guest < ours ? guest : ours;
}

CpuMask mask_from_bitmap(const uint8_t* bytes, uint32_t nr_bits, uint32_t nr_cpu_ids) {
  uint32_t count = bitmap_read_bytes(nr_bits, nr_cpu_ids);
  uint32_t guest_bytes = uint32_t((uint64_t(nr_bits) + 7) / 8);
  CpuMask mask;
  for (uint32_t i = 0; i < count; ++i) {
    uint8_t byte = bytes[i];
    // The guest's last byte: only its nr_bits % 8 low bits count.
    if (i + 1 == guest_bytes && (nr_bits & 7)) byte &= uint8_t((1u << (nr_bits & 7)) - 1);
    for (unsigned bit = 0; bit < 8; ++bit)
      if ((byte >> bit) & 1) mask.add(i * 8 + bit);
  }
  return mask & CpuMask::first(nr_cpu_ids);
}

uint32_t bitmap_write_bytes(uint32_t nr_bits) { return uint32_t((uint64_t(nr_bits) + 7) / 8); }

void bitmap_from_mask(CpuMask mask, uint32_t nr_cpu_ids, uint8_t* out, uint32_t out_bytes) {
  uint32_t ours = (nr_cpu_ids + 7) / 8;
  mask = mask & CpuMask::first(nr_cpu_ids);
  for (uint32_t i = 0; i < out_bytes; ++i)
    out[i] = i < ours && i * 8 < CpuMask::capacity ? uint8_t(mask.bits() >> (i * 8)) : 0;
}

long check_vcpu_affinity_request(uint32_t vcpu, uint32_t max_vcpus, bool vcpu_exists, uint32_t flags,
                                 bool hard_handle_null, bool soft_handle_null) {
  if (vcpu >= max_vcpus) return -XEN_EINVAL;
  if (!vcpu_exists) return -XEN_ESRCH;
  if (flags == 0 || ((flags & XEN_VCPUAFFINITY_HARD) && hard_handle_null) ||
      ((flags & XEN_VCPUAFFINITY_SOFT) && soft_handle_null))
    return -XEN_EINVAL;
  return 0;
}

AffinityChange set_vcpu_affinity(CpuMask hard, CpuMask soft, uint32_t flags, CpuMask given_hard, CpuMask given_soft,
                                 CpuMask online) {
  AffinityChange change{0, hard, soft, {}, {}};
  if (flags & XEN_VCPUAFFINITY_HARD) {
    if ((given_hard & online).empty()) {
      change.error = -XEN_EINVAL;
      return change;
    }
    change.hard = given_hard;
    change.hard_out = online & change.hard;
  }
  if (flags & XEN_VCPUAFFINITY_SOFT) {
    change.soft = given_soft;
    change.soft_out = given_soft & online & change.hard;
  }
  return change;
}
}  // namespace control
