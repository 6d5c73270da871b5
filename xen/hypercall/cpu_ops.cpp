// Hypercalls that set up the PV CPU: trap table, callbacks, kernel stack, segment bases,
// the FPU switch flag and the return from a bounce frame (iret).
#include "arch/x86/cpu/canonical.h"
#include "abi/xen_abi.h"
#include <xen/callback.h>
#include <xen/errno.h>
#include <xen/xen.h>
#include "arch/x86/cpu/fpu.h"
#include "arch/x86/cpu/registers.h"
#include "arch/x86/cpu/rflags.h"
#include "domain/domain.h"
#include "hypercall/dispatch.h"
#include "domain/descriptor_tables.h"
#include "domain/guest_mode.h"
#include "domain/guest_memory.h"
#include "domain/debug_register_cpu.h"

namespace hypercall {
namespace {

using cpu::canonical;
constexpr uint8_t nmi_vector = 2, trap_masks_events = 4;  // TI_SET_IF

long register_callback(Vcpu& vcpu, const callback_register& cb) {
  if (!canonical(cb.address)) return -XEN_EINVAL;
  switch (cb.type) {
    case CALLBACKTYPE_event: vcpu.event_callback = cb.address; return 0;
    case CALLBACKTYPE_failsafe: vcpu.failsafe_callback = cb.address; return 0;
    case CALLBACKTYPE_syscall:
      vcpu.syscall_callback = cb.address;
      vcpu.syscall_disables_events = cb.flags & CALLBACKF_mask_events;
      return 0;
    case CALLBACKTYPE_syscall32:  // a 32-bit user process's syscall (see pv::handle_syscall)
      vcpu.syscall32_callback = cb.address;
      vcpu.syscall32_disables_events = cb.flags & CALLBACKF_mask_events;
      return 0;
    case CALLBACKTYPE_sysenter:  // sysenter from the guest (pv/software_interrupt)
      vcpu.sysenter_callback = cb.address;
      vcpu.sysenter_disables_events = cb.flags & CALLBACKF_mask_events;
      return 0;
    case CALLBACKTYPE_nmi:  // Xen keeps it as the trap table's vector 2, events masked
      vcpu.trap_table[nmi_vector] = trap_info_t{nmi_vector, trap_masks_events, FLAT_KERNEL_CS, cb.address};
      return 0;
    default: return -XEN_ENOSYS;
  }
}

// As Xen 4.17: the callbacks a 64-bit PV guest has cannot be unregistered (-EINVAL; it
// registers another address instead); NMI is the only one that can, and we deliver none.
long unregister_callback(Vcpu& vcpu, unsigned type) {
  switch (type) {
    case CALLBACKTYPE_event:
    case CALLBACKTYPE_failsafe:
    case CALLBACKTYPE_syscall:
    case CALLBACKTYPE_syscall32:
    case CALLBACKTYPE_sysenter: return -XEN_EINVAL;
    case CALLBACKTYPE_nmi: vcpu.trap_table[nmi_vector] = trap_info_t{}; return 0;
    default: return -XEN_ENOSYS;
  }
}
}  // namespace

// Entries until one with address 0, as Xen's do_set_trap_table; preemptible between entries.
long set_trap_table(Vcpu& vcpu, TrapFrame&, Arguments& args) {
  uint64_t list = args.a[0];
  if (!list) {
    for (auto& trap : vcpu.trap_table) trap = trap_info_t{};
    return 0;
  }
  for (bool first = true;; list += sizeof(trap_info_t), first = false) {
    if (!first && preemption_requested()) {
      args.a[0] = list;
      return restart;
    }
    trap_info_t trap;
    if (!guest_memory::read(vcpu, list, trap)) return -XEN_EFAULT;
    if (trap.address == 0) return 0;
    if (!canonical(trap.address)) return -XEN_EINVAL;
    vcpu.trap_table[trap.vector] = trap;
  }
}

long stack_switch(Vcpu& vcpu, TrapFrame&, Arguments& args) {
  vcpu.kernel_ss = args.a[0];
  vcpu.kernel_sp = args.a[1];
  return 0;
}

long set_callbacks(Vcpu& vcpu, TrapFrame&, Arguments& args) {
  for (uint64_t address : args.a)
    if (!canonical(address)) return -XEN_EINVAL;
  vcpu.event_callback = args.a[0];
  vcpu.failsafe_callback = args.a[1];
  vcpu.syscall_callback = args.a[2];
  return 0;
}

long callback_op(Vcpu& vcpu, TrapFrame&, Arguments& args) {
  switch (args.a[0]) {
    case CALLBACKOP_register: {
      callback_register cb;
      if (!guest_memory::read(vcpu, args.a[1], cb)) return -XEN_EFAULT;
      return register_callback(vcpu, cb);
    }
    case CALLBACKOP_unregister: {
      callback_unregister cb;
      if (!guest_memory::read(vcpu, args.a[1], cb)) return -XEN_EFAULT;
      return unregister_callback(vcpu, cb.type);
    }
    default: return -XEN_ENOSYS;
  }
}

// HYPERVISOR_set_debugreg(reg, value) / get_debugreg(reg): Xen's `int reg` (32 bits), its
// checks and values (pv/rules/debug_registers); CR4.DE is the guest's own view. What it sets takes
// effect on the CPU at once (domain/debug_register_cpu), as Xen writes the register.
namespace {
constexpr uint64_t cr4_de = 1u << 3;
}
long set_debugreg(Vcpu& vcpu, TrapFrame&, Arguments& args) {
  const long rc = debug_registers::set(vcpu.debug, uint32_t(args.a[0]), args.a[1], vcpu.guest_cr4 & cr4_de);
  if (rc == 0) debug_register_cpu::load(vcpu.debug);
  return rc;
}
long get_debugreg(Vcpu& vcpu, TrapFrame&, Arguments& args) {
  uint64_t value = 0;
  const long rc = debug_registers::get(vcpu.debug, uint32_t(args.a[0]), vcpu.guest_cr4 & cr4_de, value);
  return rc != 0 ? rc : long(value);
}

long fpu_taskswitch(Vcpu& vcpu, TrapFrame&, Arguments& args) {
  vcpu.fpu_switched_out = args.a[0] != 0;
  fpu::set_task_switched(vcpu.fpu_switched_out);
  return 0;
}

long set_segment_base(Vcpu& vcpu, TrapFrame&, Arguments& args) {
  uint64_t base = args.a[1];
  switch (args.a[0]) {
    case SEGBASE_FS:
      if (!canonical(base)) return -XEN_EINVAL;
      vcpu.fs_base = base;
      cpu::write_msr(cpu::msr::fs_base, base);
      return 0;
    case SEGBASE_GS_USER:
      if (!canonical(base)) return -XEN_EINVAL;
      vcpu.gs_base_user = base;
      if (!vcpu.kernel_mode) cpu::write_msr(cpu::msr::gs_base, base);
      return 0;
    case SEGBASE_GS_KERNEL:
      if (!canonical(base)) return -XEN_EINVAL;
      vcpu.gs_base_kernel = base;
      if (vcpu.kernel_mode) cpu::write_msr(cpu::msr::gs_base, base);
      return 0;
    case SEGBASE_GS_USER_SEL:
      // Only the null selector exists for guests here (no guest GDT/LDT yet).
      return (base & 0xffff) == 0 ? 0 : -XEN_EINVAL;
    default: return -XEN_EINVAL;
  }
}

// The GDT hypercalls (domain/descriptor_tables).
long set_gdt(Vcpu& vcpu, TrapFrame&, Arguments& args) { return descriptor_tables::set_gdt(vcpu, args.a[0], args.a[1]); }
long update_descriptor(Vcpu& vcpu, TrapFrame&, Arguments& args) {
  return descriptor_tables::update_descriptor(vcpu, args.a[0], args.a[1]);
}

// Returns from a bounce frame: the guest stack holds Xen's struct iret_context. Its selectors
// and rip are taken as they are (only RPL 3 forced), as Xen's do_iret takes them: a frame the
// CPU refuses faults on the return path's iretq, and that fault is the guest's (pv::exit_fault).
long iret(Vcpu& vcpu, TrapFrame& frame, Arguments&) {
  iret_context context;
  if (!guest_memory::read(vcpu, frame.rsp, context)) {
    domains::crash(*vcpu.domain, "fault while reading the iret context from the guest stack");
    return 0;
  }
  if ((context.cs & 3) == 3) {
    if (!vcpu.bases.user_mfn) {
      domains::crash(*vcpu.domain, "guest switching to user mode with no user page tables");
      return 0;
    }
    guest_mode::toggle(vcpu);
  }
  if (vcpu.domain->vm_assist & (1ul << VMASST_TYPE_architectural_iopl))
    vcpu.iopl = unsigned((context.rflags & rflags::iopl) >> 12);  // as Xen's do_iret
  frame.rip = context.rip;
  frame.cs = context.cs | 3;
  frame.rflags = (context.rflags & rflags::defined & ~(rflags::iopl | rflags::virtual_8086)) | rflags::interrupt |
                 rflags::reserved_one;
  frame.rsp = context.rsp;
  frame.ss = context.ss | 3;
  if (!(context.flags & VGCF_in_syscall)) {
    frame.r11 = context.r11;
    frame.rcx = context.rcx;
  }
  vcpu.info()->evtchn_upcall_mask = !(context.rflags & rflags::interrupt);
  return long(context.rax);
}
}  // namespace hypercall
