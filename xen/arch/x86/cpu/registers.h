// Control and debug registers, MSRs, CPUID and the TSC.
#pragma once
#include <stdint.h>
#include "arch/x86/cpu/rflags.h"

namespace cpu {
inline uint64_t read_cr2() {
  uint64_t v;
  asm volatile("mov %%cr2, %0" : "=r"(v));
  return v;
}
inline uint64_t read_cr3() {
  uint64_t v;
  asm volatile("mov %%cr3, %0" : "=r"(v));
  return v;
}
inline void write_cr3(uint64_t v) { asm volatile("mov %0, %%cr3" ::"r"(v) : "memory"); }
inline uint64_t read_cr0() {
  uint64_t v;
  asm volatile("mov %%cr0, %0" : "=r"(v));
  return v;
}
inline void write_cr0(uint64_t v) { asm volatile("mov %0, %%cr0" ::"r"(v) : "memory"); }
inline uint64_t read_cr4() {
  uint64_t v;
  asm volatile("mov %%cr4, %0" : "=r"(v));
  return v;
}
inline void write_cr4(uint64_t v) { asm volatile("mov %0, %%cr4" ::"r"(v) : "memory"); }
// DR0-DR3, DR6, DR7: the instruction names the register, so the number is a constant.
template <unsigned number>
inline uint64_t read_dr() {
  uint64_t v;
  asm volatile("mov %%dr%c1, %0" : "=r"(v) : "i"(number));
  return v;
}
template <unsigned number>
inline void write_dr(uint64_t v) {
  asm volatile("mov %0, %%dr%c1" ::"r"(v), "i"(number) : "memory");
}
inline void invlpg(uint64_t va) { asm volatile("invlpg (%0)" ::"r"(va) : "memory"); }
inline void flush_tlb_local() { write_cr3(read_cr3()); }

inline uint64_t read_msr(uint32_t msr) {
  uint32_t lo, hi;
  asm volatile("rdmsr" : "=a"(lo), "=d"(hi) : "c"(msr));
  return (uint64_t(hi) << 32) | lo;
}
inline void write_msr(uint32_t msr, uint64_t v) {
  asm volatile("wrmsr" ::"c"(msr), "a"(uint32_t(v)), "d"(uint32_t(v >> 32)));
}
extern "C" uint64_t msr_read_safe(uint32_t msr, uint64_t* value);  // msr_safe.S
// rdmsr that reports an MSR the CPU does not have instead of faulting (Xen's rdmsr_safe).
inline bool read_msr_safe(uint32_t msr, uint64_t& value) { return msr_read_safe(msr, &value) == 0; }
inline uint64_t rdtsc() {
  uint32_t lo, hi;
  asm volatile("rdtsc" : "=a"(lo), "=d"(hi));
  return (uint64_t(hi) << 32) | lo;
}

struct CpuidResult {
  uint32_t eax, ebx, ecx, edx;
};
inline CpuidResult cpuid(uint32_t leaf, uint32_t subleaf = 0) {
  CpuidResult r;
  asm volatile("cpuid" : "=a"(r.eax), "=b"(r.ebx), "=c"(r.ecx), "=d"(r.edx) : "a"(leaf), "c"(subleaf));
  return r;
}

[[noreturn]] inline void halt_forever() {
  for (;;) asm volatile("cli; hlt");
}
inline void enable_interrupts() { asm volatile("sti"); }
inline void disable_interrupts() { asm volatile("cli"); }
// RFLAGS before a `cli`, for restore_interrupts: a section that must not be interrupted on this
// CPU, whether or not interrupts were on when it began.
inline uint64_t save_and_disable_interrupts() {
  uint64_t flags;
  asm volatile("pushfq; pop %0; cli" : "=r"(flags)::"memory");
  return flags;
}
inline void restore_interrupts(uint64_t saved_flags) {
  if (saved_flags & rflags::interrupt) asm volatile("sti" ::: "memory");
}
inline bool interrupts_enabled() {
  uint64_t flags;
  asm volatile("pushfq; pop %0" : "=r"(flags));
  return flags & rflags::interrupt;
}

namespace msr {
constexpr uint32_t efer = 0xc0000080;
constexpr uint32_t star = 0xc0000081;
constexpr uint32_t lstar = 0xc0000082;
constexpr uint32_t cstar = 0xc0000083;
constexpr uint32_t sfmask = 0xc0000084;
constexpr uint32_t fs_base = 0xc0000100;
constexpr uint32_t gs_base = 0xc0000101;
constexpr uint32_t kernel_gs_base = 0xc0000102;
constexpr uint32_t apic_base = 0x1b;
constexpr uint32_t pat = 0x277;
}  // namespace msr

// Xen's PAT layout (XEN_MSR_PAT): WB, WT, UC-, UC as at reset in entries 0-3 (all the
// hypervisor's own mappings use), then WC, WP. The hypervisor loads it (cpu_tables) and a PV
// guest reads it back (pv/rules/msr_emulation).
constexpr uint64_t xen_pat = 0x050100070406ull;
}  // namespace cpu
