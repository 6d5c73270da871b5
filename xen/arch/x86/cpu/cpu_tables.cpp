#include "arch/x86/cpu/cpu_tables.h"
#include "arch/x86/cpu/descriptors.h"
#include "arch/x86/cpu/per_cpu.h"
#include "arch/x86/cpu/registers.h"
#include "arch/x86/cpu/rflags.h"
#include "arch/x86/cpu/stacks.h"
#include "arch/x86/cpu/trap_frame.h"
#include "arch/x86/layout.h"
#include "abi/xen_abi.h"

extern "C" char exception_stubs[];
extern "C" char debug_entry[];
extern "C" const uint64_t syscall_entries[MAX_CPUS];
extern "C" const uint64_t syscall_compat_entries[MAX_CPUS];
// entry.S: each CPU's line of the words its entry stubs read.
extern "C" uint8_t cpu_entry_data[MAX_CPUS * CPU_ENTRY_BYTES];

namespace {
constexpr unsigned stub_size = 16;

// Xen's reserved selectors sit at the top of a 64 KiB GDT (guest GDT frames would use the
// bottom); we keep the same numbers so guest iret frames carry the selectors Xen's ABI names.
// CPU 0's GDT is this one; an AP's lies in its stack window (stacks::build_ap). All CPUs share
// the IDT (its IST numbers index each CPU's own TSS); each has its TSS.
alignas(4096) uint64_t gdt[GDT_BYTES / 8];
alignas(16) GateDescriptor idt[256];
alignas(16) TaskStateSegment tss[MAX_CPUS];

constexpr unsigned index_of(uint16_t selector) { return selector >> 3; }
}  // namespace

namespace {
// Each CPU's GDT (CPU 0's the image's, an AP's set by init_ap): written by that CPU only.
uint64_t* gdt_of[MAX_CPUS] = {gdt};
}  // namespace

uint64_t* cpu_tables::guest_gdt_entries() { return gdt_of[per_cpu::this_cpu()]; }

uint64_t cpu_tables::entry_stack_top(unsigned cpu) {
  uint64_t top;
  __builtin_memcpy(&top, &cpu_entry_data[cpu * CPU_ENTRY_BYTES + CPU_ENTRY_STACK_TOP], sizeof(top));
  return top;
}

namespace {

void build_gdt(uint64_t* table, TaskStateSegment& cpu_tss) {
  table[index_of(SELECTOR_HYPERVISOR_CS)] = SegmentDescriptor::code64(0).raw();
  table[index_of(SELECTOR_HYPERVISOR_DS)] = SegmentDescriptor::data(0).raw();
  table[index_of(FLAT_RING3_CS32)] = SegmentDescriptor::code32(3).raw();
  table[index_of(FLAT_RING3_DS32)] = SegmentDescriptor::data(3).raw();  // also FLAT_RING3_SS32/SS64
  table[index_of(FLAT_RING3_CS64)] = SegmentDescriptor::code64(3).raw();
  auto tss_descriptor = SystemDescriptor::tss(uint64_t(&cpu_tss), sizeof(cpu_tss) - 1);
  table[index_of(SELECTOR_TSS)] = tss_descriptor.low;
  table[index_of(SELECTOR_TSS) + 1] = tss_descriptor.high;
}

void load_gdt(const uint64_t* table) {
  DescriptorTablePointer pointer{uint16_t(GDT_BYTES - 1), uint64_t(table)};
  asm volatile("lgdt %0" ::"m"(pointer));
  // Reload CS through a far return, then the data segments and the task register.
  asm volatile(
      "pushq %0\n"
      "leaq 1f(%%rip), %%rax\n"
      "pushq %%rax\n"
      "lretq\n"
      "1:\n"
      "mov %1, %%eax\n"
      "mov %%eax, %%ds\n"
      "mov %%eax, %%es\n"
      "mov %%eax, %%ss\n"
      "xor %%eax, %%eax\n"
      "mov %%eax, %%fs\n"
      "mov %%eax, %%gs\n" ::"i"(SELECTOR_HYPERVISOR_CS),
      "i"(SELECTOR_HYPERVISOR_DS)
      : "rax", "memory");
  asm volatile("ltr %w0" ::"r"(SELECTOR_TSS));
  // A null LDT: a selector with TI set (a guest's iret frame may hold one) then faults with
  // #GP like any other bad selector, instead of being looked up in a table at linear address
  // 0 (LDTR's reset value), which is guest memory.
  asm volatile("lldt %w0" ::"r"(0));
}

// NMI, double fault and machine check can interrupt anything, even an instruction that runs
// on a stack the guest chose (the first of the syscall entry) or an overflowed one: each gets
// a stack of its own. So does #DB: a `mov %ss` / `pop %ss` delays it to the first instruction
// of a following `syscall`'s entry, on the guest's rsp (XSA-260).
unsigned ist_of(unsigned vector) {
  switch (vector) {
    case vectors::debug: return unsigned(stacks::Ist::debug);
    case vectors::double_fault: return unsigned(stacks::Ist::double_fault);
    case vectors::nmi: return unsigned(stacks::Ist::nmi);
    case vectors::machine_check: return unsigned(stacks::Ist::machine_check);
    default: return 0;
  }
}

void build_idt() {
  for (unsigned v = 0; v < 256; ++v) {
    unsigned dpl = (v == 3 || v == 4) ? 3 : 0;  // int3 and into from the guest, as Xen allows
    unsigned ist = ist_of(v);
    uint64_t stub = v == vectors::debug ? uint64_t(debug_entry) : uint64_t(exception_stubs) + v * stub_size;
    idt[v] = GateDescriptor::interrupt(stub, SELECTOR_HYPERVISOR_CS, dpl, ist);
  }
}

void load_idt() {
  DescriptorTablePointer pointer{uint16_t(sizeof(idt) - 1), uint64_t(idt)};
  asm volatile("lidt %0" ::"m"(pointer));
}

// Each CPU enters through its own copy of the syscall entries (entry.S).
void enable_syscall(unsigned cpu) {
  using namespace cpu;
  write_msr(msr::efer, read_msr(msr::efer) | 1);  // SCE
  // sysret would load CS = FLAT_RING3_CS32 + 16 = FLAT_RING3_CS64 and SS = + 8 = FLAT_RING3_SS64.
  write_msr(msr::star, (uint64_t(FLAT_RING3_CS32) << 48) | (uint64_t(SELECTOR_HYPERVISOR_CS) << 32));
  write_msr(msr::lstar, syscall_entries[cpu]);
  write_msr(msr::cstar, syscall_compat_entries[cpu]);
  // Xen's mask: the hypervisor never runs with a flag the guest chose. NT in particular would
  // make the return path's iretq fault in ring 0; TF would trap the entry's first instruction.
  write_msr(msr::sfmask, rflags::interrupt | rflags::direction | rflags::trap | rflags::nested_task |
                             rflags::alignment_check | rflags::resume | rflags::virtual_8086);
}

void load_pat() { cpu::write_msr(cpu::msr::pat, cpu::xen_pat); }
}  // namespace

namespace cpu_tables {
void init() {
  build_gdt(gdt, tss[0]);
  tss[0].io_map_base = sizeof(TaskStateSegment);  // no I/O bitmap: ring 3 gets #GP on every port
  load_stacks(0);
  load_gdt(gdt);
  build_idt();
  load_idt();
  enable_syscall(0);
  load_pat();
}

void init_ap(unsigned cpu, uint64_t* ap_gdt) {
  build_gdt(ap_gdt, tss[cpu]);
  gdt_of[cpu] = ap_gdt;
  tss[cpu].io_map_base = sizeof(TaskStateSegment);
  load_stacks(cpu);
  load_gdt(ap_gdt);
  load_idt();
  enable_syscall(cpu);
  load_pat();
}

// The IST stacks' tops sit 16 bytes below the stacks' real tops: the word there holds the
// CPU's entry-stack top, which the #DB stub reads right above its frame (entry.S).
void load_stacks(unsigned cpu) {
  uint64_t entry_top = stacks::entry_stack_top(cpu);
  for (unsigned i = 1; i <= stacks::ist_count; ++i) {
    uint64_t top = stacks::ist_stack_top(stacks::Ist(i), cpu) - 16;
    *reinterpret_cast<uint64_t*>(top) = entry_top;
    tss[cpu].ist[i - 1] = top;
  }
  tss[cpu].rsp[0] = entry_top;
  __builtin_memcpy(cpu_entry_data + cpu * CPU_ENTRY_BYTES + CPU_ENTRY_STACK_TOP, &entry_top, sizeof(entry_top));
}
}  // namespace cpu_tables
