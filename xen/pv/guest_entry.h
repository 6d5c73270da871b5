// Where guest activity enters the hypervisor: `syscall` (hypercalls from the guest kernel,
// system calls from guest user mode) and exceptions raised while a guest ran.
#pragma once
#include "arch/x86/cpu/trap_frame.h"

struct Vcpu;

// The syscall entry stubs' targets (arch/x86/entry.S), from 64-bit and from compatibility-mode
// code; each returns through the trap return path.
extern "C" void guest_syscall(TrapFrame* frame);
extern "C" void guest_syscall_compat(TrapFrame* frame);

namespace pv {
// `vcpu` is the current vCPU (the caller read it once for this and the return to the guest).
void handle_guest_exception(Vcpu& vcpu, TrapFrame& frame);
// Delivers exception `vector` to the guest kernel through its trap table (or crashes it).
void inject_exception(Vcpu& vcpu, TrapFrame& frame, unsigned vector, uint32_t error_code);
// The return path's iretq faulted on a guest's frame (`fault` is that fault, taken in ring 0).
[[noreturn]] void exit_fault(const TrapFrame& fault);
// First entry into a guest: the frame is copied to the top of the hypervisor stack.
[[noreturn]] void enter_guest(const TrapFrame& frame);
}  // namespace pv
