// The boot CPU's GDT (with Xen's selector layout, so guests use FLAT_RING3_* selectors),
// IDT, TSS and the syscall MSRs.
#pragma once
#include <stdint.h>

namespace cpu_tables {
void init();
void set_kernel_stack(uint64_t top);  // TSS.rsp0: where ring-3 entries land
}  // namespace cpu_tables

extern "C" uint64_t hypervisor_stack_top;
