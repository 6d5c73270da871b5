#pragma once
// System calls from user mode, with Linux x86-64 numbers and semantics: rax holds the number,
// rdi, rsi, rdx, r10, r8, r9 the arguments, rax the result (negative errno on failure).
#include "arch/trap_frame.h"

namespace kernel {

void syscall_dispatch(TrapFrame& frame);
// PVHV_SYS_counters: the hypervisor's counters copied out to a user buffer.
long sys_pvhv_counters(uint64_t out);

}  // namespace kernel
