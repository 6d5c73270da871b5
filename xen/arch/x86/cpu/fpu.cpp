#include "arch/x86/cpu/fpu.h"
#include "arch/x86/cpu/registers.h"

namespace fpu {
namespace {
constexpr uint64_t cr0_mp = 1u << 1, cr0_em = 1u << 2, cr0_ts = 1u << 3, cr0_ne = 1u << 5;
constexpr uint16_t fninit_control_word = 0x037f;
constexpr uint32_t reset_mxcsr = 0x1f80;

// fxsave/fxrstor fault with #NM while CR0.TS is set, which a guest may have asked for.
void clear_task_switched() { asm volatile("clts" ::: "memory"); }
}  // namespace

void init() {
  constexpr uint64_t cr4_osfxsr = 1u << 9, cr4_osxmmexcpt = 1u << 10;
  cpu::write_cr0((cpu::read_cr0() & ~(cr0_em | cr0_ts)) | cr0_mp | cr0_ne);
  cpu::write_cr4(cpu::read_cr4() | cr4_osfxsr | cr4_osxmmexcpt);
  asm volatile("fninit");
}

void initial_state(uint8_t* area) {
  __builtin_memset(area, 0, 512);
  __builtin_memcpy(area, &fninit_control_word, sizeof(fninit_control_word));  // FCW at byte 0
  __builtin_memcpy(area + 24, &reset_mxcsr, sizeof(reset_mxcsr));             // MXCSR at byte 24
}

void save(uint8_t* area) {
  clear_task_switched();
  asm volatile("fxsave64 (%0)" ::"r"(area) : "memory");
}

void restore(const uint8_t* area) {
  clear_task_switched();
  asm volatile("fxrstor64 (%0)" ::"r"(area) : "memory");
}

void set_task_switched(bool on) {
  uint64_t cr0 = cpu::read_cr0();
  cpu::write_cr0(on ? cr0 | cr0_ts : cr0 & ~cr0_ts);
}
}  // namespace fpu
