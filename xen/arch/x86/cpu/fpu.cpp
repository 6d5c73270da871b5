#include "arch/x86/cpu/fpu.h"
#include "arch/x86/cpu/registers.h"

namespace fpu {
void init() {
  constexpr uint64_t cr0_mp = 1u << 1, cr0_em = 1u << 2, cr0_ts = 1u << 3, cr0_ne = 1u << 5;
  constexpr uint64_t cr4_osfxsr = 1u << 9, cr4_osxmmexcpt = 1u << 10;
  cpu::write_cr0((cpu::read_cr0() & ~(cr0_em | cr0_ts)) | cr0_mp | cr0_ne);
  cpu::write_cr4(cpu::read_cr4() | cr4_osfxsr | cr4_osxmmexcpt);
  asm volatile("fninit");
}
}  // namespace fpu
