#include "pv/rules/control_registers.h"

namespace control_registers {

Decoded decode_move(const uint8_t* bytes, size_t available, uint8_t from_opcode) {
  size_t i = 0;
  uint8_t rex = 0;
  if (available > 0 && (bytes[0] & 0xf0) == 0x40) rex = bytes[i++];
  const uint8_t to_opcode = uint8_t(from_opcode + 2);
  if (available < i + 3 || bytes[i] != 0x0f || (bytes[i + 1] != from_opcode && bytes[i + 1] != to_opcode)) return {};
  const uint8_t modrm = bytes[i + 2];
  Decoded decoded;
  decoded.valid = true;
  decoded.to_cr = bytes[i + 1] == to_opcode;
  decoded.cr = ((modrm >> 3) & 7) | ((rex & 0x4) << 1);
  decoded.gpr = emulate::Gpr((modrm & 7) | ((rex & 1) << 3));
  decoded.length = unsigned(i + 3);
  return decoded;
}

Decoded decode(const uint8_t* bytes, size_t available) {
  const Decoded decoded = decode_move(bytes, available, 0x20);
  if (decoded.cr >= 8) return {};  // REX.R: CR8 and up
  return decoded;
}

uint64_t guest_cr4(uint64_t requested, uint64_t hardware_cr4, const Cr4Policy& policy) {
  constexpr uint64_t guest_mask = cr4_tsd | cr4_de | cr4_fsgsbase | cr4_osxsave;
  constexpr uint64_t visible_mask = cr4_pae | cr4_mce | cr4_osfxsr | cr4_osxmmexcpt;
  requested &= ~((policy.tsc ? 0 : cr4_tsd) | (policy.de ? 0 : cr4_de) | (policy.fsgsbase ? 0 : cr4_fsgsbase) |
                 (policy.xsave ? 0 : cr4_osxsave));
  return (requested & guest_mask) | (hardware_cr4 & visible_mask);
}

bool read(const State& state, unsigned cr, uint64_t& value) {
  switch (cr) {
    case 0: value = (state.hardware_cr0 & ~cr0_ts) | (state.task_switched ? cr0_ts : 0); return true;
    case 2: value = state.cr2; return true;
    case 3: value = state.kernel_table_mfn << 12; return true;  // xen_pfn_to_cr3
    case 4: value = state.guest_cr4; return true;
    default: return false;
  }
}

bool write(State& state, unsigned cr, uint64_t value) {
  switch (cr) {
    case 0:
      if ((value ^ state.hardware_cr0) & ~cr0_ts) return false;  // only TS is the guest's
      state.task_switched = value & cr0_ts;
      return true;
    case 4: state.guest_cr4 = guest_cr4(value, state.hardware_cr4, state.policy); return true;
    default: return false;
  }
}
}  // namespace control_registers
