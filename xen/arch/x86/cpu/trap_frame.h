// The register frame every entry into the hypervisor builds on its stack: exceptions,
// interrupts and the guest's `syscall` all share it, so one return path serves all of them.
#pragma once
#include <stdint.h>

struct TrapFrame {
  // rdi, rsi, rdx, r10, r8 in a row: a hypercall's arguments in the ABI's order, which its
  // handler reads and rewrites in place (hypercall/guest_call.h).
  uint64_t r15, r14, r13, r12, r11, r9, rbp, rcx, rbx, rdi, rsi, rdx, r10, r8, rax;
  uint64_t vector, error_code;
  uint64_t rip, cs, rflags, rsp, ss;  // as pushed by the CPU (or by the syscall entry)

  constexpr bool from_guest() const { return (cs & 3) != 0; }
};
static_assert(sizeof(TrapFrame) == 22 * 8);

namespace vectors {
constexpr uint64_t debug = 1;
constexpr uint64_t page_fault = 14;
constexpr uint64_t nmi = 2;
constexpr uint64_t double_fault = 8;
constexpr uint64_t invalid_tss = 10;
constexpr uint64_t segment_not_present = 11;
constexpr uint64_t stack_fault = 12;
constexpr uint64_t general_protection = 13;
constexpr uint64_t machine_check = 18;
constexpr uint64_t first_external = 32;
constexpr uint64_t lapic_timer = 0xf0;
constexpr uint64_t halt_cpu = 0xf1;       // an IPI: stop now (another CPU panics)
constexpr uint64_t call_function = 0xf2;  // an IPI: run the cross-CPU call (arch/x86/platform/cross_cpu)
constexpr uint64_t event_check = 0xf3;    // an IPI that does nothing but wake a halted CPU
constexpr uint64_t spurious = 0xff;
constexpr uint64_t syscall = 0x100;  // not a hardware vector: set by the syscall entry stub
}  // namespace vectors
