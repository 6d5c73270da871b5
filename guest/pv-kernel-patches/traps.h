#pragma once
// The trap table given to the hypervisor: arch/entry.S's stub for each exception, which calls
// the kernel's dispatcher (kernel/trap_dispatch.h).
#include "arch/trap_frame.h"
#include "arch/xen.h"

namespace pv {

void traps_install();
// The same handlers by vector (a vCPU context's trap_ctxt: each secondary vCPU starts with them).
void traps_fill_context(trap_info_t (&by_vector)[256]);
// Forgets every exception handler (HYPERVISOR_set_trap_table(NULL)); used by selftest=fault.
void traps_remove_all();
// Inline: the dispatcher (kernel/trap_dispatch.cpp) names the exception of every fault it
// reports.
inline const char* exception_name(uint64_t vector) {
  static const char* const kNames[] = {"divide error",
                                       "debug",
                                       "NMI",
                                       "breakpoint",
                                       "overflow",
                                       "bound range",
                                       "invalid opcode",
                                       "device not available",
                                       "double fault",
                                       "coprocessor segment",
                                       "invalid TSS",
                                       "segment not present",
                                       "stack fault",
                                       "general protection",
                                       "page fault",
                                       "reserved",
                                       "x87 error",
                                       "alignment check",
                                       "machine check",
                                       "SIMD error"};
  return vector < sizeof(kNames) / sizeof(kNames[0]) ? kNames[vector] : "unknown";
}

}  // namespace pv
