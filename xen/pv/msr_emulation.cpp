#include "pv/msr_emulation.h"
#include "arch/x86/cpu/canonical.h"

namespace msr_emulation {

Decoded decode(const uint8_t* bytes, size_t available) {
  size_t i = (available > 0 && (bytes[0] & 0xf0) == 0x40) ? 1 : 0;  // REX changes nothing here
  if (available < i + 2 || bytes[i] != 0x0f) return {};
  if (bytes[i + 1] == 0x30) return {Instruction::wrmsr, unsigned(i + 2)};
  if (bytes[i + 1] == 0x32) return {Instruction::rdmsr, unsigned(i + 2)};
  return {};
}

namespace {
uint64_t* base_of(uint32_t msr, SegmentBases& bases) {
  switch (msr) {
    case cpu::msr::fs_base: return &bases.fs;
    case cpu::msr::gs_base: return &bases.gs_kernel;
    case cpu::msr::kernel_gs_base: return &bases.gs_user;  // SHADOW_GS_BASE: user mode's GS
    default: return nullptr;
  }
}
}  // namespace

bool read(uint32_t msr, const SegmentBases& bases, uint64_t& value) {
  SegmentBases copy = bases;
  const uint64_t* base = base_of(msr, copy);
  if (base == nullptr) return false;
  value = *base;
  return true;
}

bool write(uint32_t msr, uint64_t value, SegmentBases& bases) {
  uint64_t* base = base_of(msr, bases);
  if (base == nullptr || !cpu::canonical(value)) return false;
  *base = value;
  return true;
}

}  // namespace msr_emulation
