#pragma once
// Hypercalls through the hypercall page Xen fills in at build time: entry N sits at
// hypercall_page + N * 32 and takes its arguments in rdi, rsi, rdx, r10, r8 (64-bit PV ABI).
// The stubs preserve rcx/r11 themselves; argument registers are treated as clobbered
// because a debug hypervisor scribbles on the ones a hypercall does not use.
#include <stdint.h>

extern "C" char hypercall_page[];

namespace arch {

inline long hypercall(unsigned number, uint64_t a1 = 0, uint64_t a2 = 0, uint64_t a3 = 0, uint64_t a4 = 0,
                      uint64_t a5 = 0) {
  register uint64_t r10 asm("r10") = a4;
  register uint64_t r8 asm("r8") = a5;
  long result;
  void* entry = hypercall_page + number * 32;
  asm volatile("call *%[entry]"
               : "=a"(result), "+D"(a1), "+S"(a2), "+d"(a3), "+r"(r10), "+r"(r8)
               : [entry] "r"(entry)
               : "memory", "rcx", "r11");
  return result;
}

template <typename T>
inline uint64_t arg(T* pointer) {
  return reinterpret_cast<uint64_t>(pointer);
}

}  // namespace arch
