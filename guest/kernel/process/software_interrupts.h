#pragma once
// Software interrupts and sysenter into the kernel (selftest=swint, guest/user/swint.c), and
// Linux's iopl(2). The handlers exist always; the trap-table entries and the sysenter callback
// that lead to them are registered by selftest=swint only.
#include <stdint.h>
#include "arch/trap_frame.h"

namespace kernel {
// What a delivered software interrupt or sysenter leaves in rax for the code that raised it.
constexpr uint64_t kSoftwareInterruptDelivered = 0x5157;

// A software interrupt the hypervisor delivered through the trap table (vector >= 32).
void software_interrupt_arrived(TrapFrame& frame);
// The sysenter callback: the frame is printed (Xen's says rip 0, rsp 0: sysenter saves
// neither), and the caller resumes where it said, SYSEXIT's convention: rip in rdx, rsp in rcx.
void sysenter_arrived(TrapFrame& frame);
// iopl(2): the virtual IOPL for user mode too, through PHYSDEVOP_set_iopl, or under
// VMASST_TYPE_architectural_iopl through the IOPL of the frame the system call returns with.
long sys_iopl(TrapFrame& frame, uint64_t level);
// selftest=swint turns VMASST_TYPE_architectural_iopl on: from then on sys_iopl uses the frame.
void set_architectural_iopl(bool on);
}  // namespace kernel
