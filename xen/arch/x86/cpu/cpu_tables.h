// The boot CPU's GDT (with Xen's selector layout, so guests use FLAT_RING3_* selectors),
// IDT, TSS and the syscall MSRs.
#pragma once
#include <stdint.h>

namespace cpu_tables {
void init();
// TSS.rsp0 (where ring-3 entries land), the IST stacks and the syscall entry's stack, from
// arch/x86/cpu/stacks.
void load_stacks();
// The guest's part of the GDT (the entries below FIRST_RESERVED_GDT_ENTRY): the running
// vCPU's set_gdt descriptors are copied there (domain/descriptor_tables).
uint64_t* guest_gdt_entries();
}  // namespace cpu_tables

extern "C" uint64_t hypervisor_stack_top;
