#include "domain/debug_register_cpu.h"
#include "arch/x86/cpu/registers.h"
#include "arch/x86/cpu/per_cpu.h"
#include "arch/x86/layout.h"

namespace debug_register_cpu {
namespace {
// What DR7 on each CPU holds, written by that CPU only.
uint64_t dr7_of[MAX_CPUS] = {};

void write_dr7(uint64_t value) {
  cpu::write_dr<7>(value);
  dr7_of[per_cpu::this_cpu()] = value;
}
}  // namespace

void init() {
  write_dr7(debug_registers::kDr7Default);
  cpu::write_dr<6>(debug_registers::kDr6Default);
}

void load(const debug_registers::State& state) {
  if (!debug_registers::active(state.dr7)) {
    if (debug_registers::active(dr7_of[per_cpu::this_cpu()])) write_dr7(state.dr7);
    return;
  }
  cpu::write_dr<0>(state.dr[0]);
  cpu::write_dr<1>(state.dr[1]);
  cpu::write_dr<2>(state.dr[2]);
  cpu::write_dr<3>(state.dr[3]);
  cpu::write_dr<6>(state.dr6);
  write_dr7(state.dr7);
}

void unload() {
  if (debug_registers::active(dr7_of[per_cpu::this_cpu()])) write_dr7(0);
}

uint64_t loaded_dr7() { return dr7_of[per_cpu::this_cpu()]; }

void disable() { write_dr7(0); }

void watch_hypervisor_word(uint64_t address) {
  constexpr uint64_t local0 = 1, write0 = 1u << 16, eight_bytes0 = 2u << 18;
  cpu::write_dr<0>(address);
  cpu::write_dr<7>(debug_registers::kDr7Default | local0 | write0 | eight_bytes0);
}
}  // namespace debug_register_cpu
