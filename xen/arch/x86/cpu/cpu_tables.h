// Each CPU's GDT (with Xen's selector layout, so guests use FLAT_RING3_* selectors) and TSS,
// the IDT they share, the syscall MSRs (each CPU its own entries) and the PAT.
#pragma once
#include <stdint.h>

namespace cpu_tables {
void init();  // the boot CPU (CPU 0), whose GDT is in the image
// An AP, on itself: `gdt` (GDT_BYTES, from stacks::build_ap) built as CPU 0's, loaded with
// its TSS, the shared IDT, its syscall entries, the PAT.
void init_ap(unsigned cpu, uint64_t* gdt);
// CPU `cpu`'s TSS.rsp0 (where ring-3 entries land), its IST stacks and its syscall entry's
// stack, from arch/x86/cpu/stacks.
void load_stacks(unsigned cpu);
// The guest's part of the GDT (the entries below FIRST_RESERVED_GDT_ENTRY): the running
// vCPU's set_gdt descriptors are copied there (domain/descriptor_tables). This CPU's.
uint64_t* guest_gdt_entries();
// CPU `cpu`'s entry-stack top (its line of entry.S's cpu_entry_data): where its guest frame is.
uint64_t entry_stack_top(unsigned cpu);
}  // namespace cpu_tables

// CPU 0's entry-stack top (entry.S, its line of cpu_entry_data): where the first guest frame goes.
extern "C" uint64_t hypervisor_stack_top;
