#include "arch/x86/cpu/cpu_tables.h"
#include "arch/x86/cpu/descriptors.h"
#include "arch/x86/cpu/registers.h"
#include "arch/x86/cpu/trap_frame.h"
#include "arch/x86/layout.h"

extern "C" char exception_stubs[];
extern "C" char syscall_entry[];

extern "C" uint64_t hypervisor_stack_top;
uint64_t hypervisor_stack_top;

namespace {
constexpr unsigned stub_size = 16;
constexpr unsigned double_fault_ist = 1;

// Xen's reserved selectors sit at the top of a 64 KiB GDT (guest GDT frames would use the
// bottom); we keep the same numbers so guest iret frames carry the selectors Xen's ABI names.
alignas(4096) uint64_t gdt[GDT_BYTES / 8];
alignas(16) GateDescriptor idt[256];
alignas(16) TaskStateSegment tss;
alignas(16) uint8_t double_fault_stack[4096];
// Entries from ring 3 land here. It is not the boot stack: the boot path's frames (holding the
// first guest frame) are live while enter_guest copies that frame to the top of this stack.
alignas(4096) uint8_t hypervisor_stack[STACK_BYTES];

constexpr unsigned index_of(uint16_t selector) { return selector >> 3; }

void build_gdt() {
  gdt[index_of(SELECTOR_HYPERVISOR_CS)] = SegmentDescriptor::code64(0).raw();
  gdt[index_of(SELECTOR_HYPERVISOR_DS)] = SegmentDescriptor::data(0).raw();
  gdt[index_of(0xe023)] = SegmentDescriptor::code32(3).raw();  // FLAT_RING3_CS32
  gdt[index_of(0xe02b)] = SegmentDescriptor::data(3).raw();    // FLAT_RING3_DS32 / SS
  gdt[index_of(0xe033)] = SegmentDescriptor::code64(3).raw();  // FLAT_RING3_CS64
  auto tss_descriptor = SystemDescriptor::tss(uint64_t(&tss), sizeof(tss) - 1);
  gdt[index_of(SELECTOR_TSS)] = tss_descriptor.low;
  gdt[index_of(SELECTOR_TSS) + 1] = tss_descriptor.high;
}

void load_gdt() {
  DescriptorTablePointer pointer{uint16_t(sizeof(gdt) - 1), uint64_t(gdt)};
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
}

void build_idt() {
  for (unsigned v = 0; v < 256; ++v) {
    unsigned dpl = (v == 3 || v == 4) ? 3 : 0;  // int3 and into from the guest, as Xen allows
    unsigned ist = v == vectors::double_fault ? double_fault_ist : 0;
    idt[v] = GateDescriptor::interrupt(uint64_t(exception_stubs) + v * stub_size, SELECTOR_HYPERVISOR_CS, dpl, ist);
  }
  DescriptorTablePointer pointer{uint16_t(sizeof(idt) - 1), uint64_t(idt)};
  asm volatile("lidt %0" ::"m"(pointer));
}

void enable_syscall() {
  using namespace cpu;
  write_msr(msr::efer, read_msr(msr::efer) | 1);  // SCE
  // sysret would load CS = 0xe023 + 16 = FLAT_RING3_CS64 and SS = 0xe023 + 8 = FLAT_RING3_SS64.
  write_msr(msr::star, (uint64_t(0xe023) << 48) | (uint64_t(SELECTOR_HYPERVISOR_CS) << 32));
  write_msr(msr::lstar, uint64_t(syscall_entry));
  write_msr(msr::cstar, uint64_t(syscall_entry));
  write_msr(msr::sfmask, (1u << 9) | (1u << 10) | (1u << 8) | (1u << 18));  // IF, DF, TF, AC
}
}  // namespace

namespace cpu_tables {
void init() {
  build_gdt();
  tss.ist[double_fault_ist - 1] = uint64_t(double_fault_stack + sizeof(double_fault_stack));
  tss.io_map_base = sizeof(tss);  // no I/O bitmap: ring 3 gets #GP on every port
  set_kernel_stack(uint64_t(hypervisor_stack + sizeof(hypervisor_stack)));
  load_gdt();
  build_idt();
  enable_syscall();
}

void set_kernel_stack(uint64_t top) {
  tss.rsp[0] = top;
  hypervisor_stack_top = top;
}
}  // namespace cpu_tables
