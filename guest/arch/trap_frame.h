#pragma once
// The register state of an interrupted context, as arch/entry.S saves it (lowest address
// first). Below `vector` it is our own layout; from `rip` on it is Xen's bounce frame.
#include <stdint.h>

namespace kernel {

struct TrapFrame {
  uint64_t r15, r14, r13, r12, r11, r10, r9, r8;
  uint64_t rbp, rdi, rsi, rdx, rcx, rbx, rax;
  uint64_t vector;      // exception number, or one of the callback pseudo-vectors below
  uint64_t error_code;  // 0 when the exception has none
  uint64_t rip;
  uint64_t cs;  // bits 32-39 hold Xen's saved upcall mask
  uint64_t rflags;
  uint64_t rsp;
  uint64_t ss;

  static constexpr uint64_t kEventVector = 256;
  static constexpr uint64_t kSyscallVector = 257;
  static constexpr uint64_t kFailsafeVector = 258;
  static constexpr uint64_t kSysenterVector = 259;

  // Xen clears the RPL of CS in frames it builds for guest-kernel context, so RPL 3 means
  // the frame was taken in user mode.
  bool from_user() const { return (cs & 3) == 3; }
};

static_assert(sizeof(TrapFrame) == 22 * 8, "layout shared with arch/entry.S");

}  // namespace kernel

extern "C" [[noreturn]] void resume_frame(kernel::TrapFrame* frame);
