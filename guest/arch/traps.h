#pragma once
// Exception handling: the trap table given to the hypervisor and the C++ dispatcher that
// arch/entry.S calls for every exception, event upcall and system call.
#include "kernel/trap_frame.h"

namespace arch {

void traps_install();
// Forgets every exception handler (HYPERVISOR_set_trap_table(NULL)); used by selftest=fault.
void traps_remove_all();
const char* exception_name(uint64_t vector);

}  // namespace arch

extern "C" void trap_dispatch(kernel::TrapFrame* frame);
