#include "pv/privileged_op.h"
#include "arch/x86/cpu/fpu.h"
#include "arch/x86/cpu/registers.h"
#include "domain/domain.h"
#include "pv/instruction_fetch.h"
#include "emulate/register_operand.h"
#include "pv/rules/control_registers.h"
#include "pv/rules/debug_register_moves.h"
#include "domain/debug_register_cpu.h"
#include "pv/guest_entry.h"
#include "pv/rules/interrupt_flag.h"
#include "pv/invalid_op.h"
#include "pv/rules/msr_emulation.h"
#include "pv/port_io.h"

namespace privileged_op {
namespace {
using instruction_fetch::FetchedInstruction;

msr_emulation::SegmentBases bases_of(const Vcpu& vcpu) {
  return {vcpu.fs_base, vcpu.gs_base_kernel, vcpu.gs_base_user};
}

// The new bases into the vCPU and the CPU (the guest is in kernel mode: GS is the kernel's).
void load_bases(Vcpu& vcpu, const msr_emulation::SegmentBases& bases) {
  vcpu.fs_base = bases.fs;
  vcpu.gs_base_kernel = bases.gs_kernel;
  vcpu.gs_base_user = bases.gs_user;
  cpu::write_msr(cpu::msr::fs_base, bases.fs);
  cpu::write_msr(cpu::msr::gs_base, vcpu.active_gs_base());
}

uint64_t read_tsc() { return cpu::rdtsc(); }

// What the MSR rules need of the CPU and of the asking vCPU.
msr_emulation::Host msr_host(const Vcpu& vcpu) {
  msr_emulation::Host host;
  const uint32_t vendor_ebx = invalid_op::guest_cpuid_register(vcpu, 0, 0, 1);
  host.vendor = vendor_ebx == 0x756e6547   ? msr_emulation::Vendor::intel  // "Genu"
                : vendor_ebx == 0x68747541 ? msr_emulation::Vendor::amd    // "Auth"
                                           : msr_emulation::Vendor::other;
  host.vcpu_id = vcpu.id;
  host.efer = cpu::read_msr(cpu::msr::efer);
  host.read_hardware = cpu::read_msr_safe;
  host.read_tsc = read_tsc;
  host.guest_has_gp_handler = vcpu.trap_table[13].address != 0;
  return host;
}

bool emulate_msr(Vcpu& vcpu, TrapFrame& frame, const FetchedInstruction& fetched) {
  const msr_emulation::Decoded decoded = msr_emulation::decode(fetched.bytes, fetched.count);
  if (decoded.instruction == msr_emulation::Instruction::none) return false;
  const uint32_t msr = uint32_t(frame.rcx);
  const msr_emulation::Host host = msr_host(vcpu);
  msr_emulation::SegmentBases bases = bases_of(vcpu);
  if (decoded.instruction == msr_emulation::Instruction::rdmsr) {
    uint64_t value = 0;
    if (!msr_emulation::read(host, bases, vcpu.msrs, msr, value)) return false;
    frame.rax = uint32_t(value);
    frame.rdx = value >> 32;
  } else {
    if (!msr_emulation::write(host, bases, vcpu.msrs, msr, (frame.rdx << 32) | uint32_t(frame.rax))) return false;
    load_bases(vcpu, bases);
  }
  frame.rip += decoded.length;
  return true;
}
// cli / sti: no-ops for code its virtual IOPL allows them to, as Xen's (pv/rules/interrupt_flag.h).
bool emulate_interrupt_flag(const Vcpu& vcpu, TrapFrame& frame, const FetchedInstruction& fetched) {
  const unsigned length = interrupt_flag::instruction_length(fetched.bytes, fetched.count);
  if (length == 0 || !port_io::iopl_allows(vcpu)) return false;
  frame.rip += length;
  return true;
}

// wbinvd (0f 09), as Xen's cache_op: performed for a domain that may flush caches (one with
// I/O memory: here the privileged one), ignored for any other ("newer Linux uses this in some
// start-of-day timing loops"); either way it completes.
bool emulate_cache_flush(const Vcpu& vcpu, TrapFrame& frame, const FetchedInstruction& fetched) {
  if (fetched.count < 2 || fetched.bytes[0] != 0x0f || fetched.bytes[1] != 0x09) return false;
  if (vcpu.domain->privileged) asm volatile("wbinvd" ::: "memory");
  frame.rip += 2;
  return true;
}

// What pv_fixup_guest_cr4 discards unless the CPUID policy offers it.
control_registers::Cr4Policy cr4_policy(const Vcpu& vcpu) {
  const uint32_t leaf1_edx = invalid_op::guest_cpuid_register(vcpu, 1, 0, 3);
  const uint32_t leaf1_ecx = invalid_op::guest_cpuid_register(vcpu, 1, 0, 2);
  const uint32_t leaf7_ebx = invalid_op::guest_cpuid_register(vcpu, 7, 0, 1);
  return {bool(leaf1_edx & (1u << 4)), bool(leaf1_edx & (1u << 2)), bool(leaf7_ebx & 1), bool(leaf1_ecx & (1u << 26))};
}

// mov to and from CR0, CR2, CR3, CR4 (pv/rules/control_registers).
bool emulate_control_register(Vcpu& vcpu, TrapFrame& frame, const FetchedInstruction& fetched) {
  const control_registers::Decoded decoded = control_registers::decode(fetched.bytes, fetched.count);
  if (!decoded.valid) return false;
  control_registers::State state;
  state.hardware_cr0 = cpu::read_cr0();
  state.hardware_cr4 = cpu::read_cr4();
  state.task_switched = vcpu.fpu_switched_out;
  state.policy = cr4_policy(vcpu);
  state.guest_cr4 = control_registers::guest_cr4(vcpu.guest_cr4, state.hardware_cr4, state.policy);
  state.cr2 = vcpu.info()->arch.cr2;
  state.kernel_table_mfn = vcpu.bases.kernel_mfn;
  if (decoded.to_cr) {
    if (!control_registers::write(state, decoded.cr, emulate::gpr(frame, decoded.gpr))) return false;
    vcpu.guest_cr4 = state.guest_cr4;
    if (state.task_switched != vcpu.fpu_switched_out) {
      vcpu.fpu_switched_out = state.task_switched;  // as fpu_taskswitch
      fpu::set_task_switched(vcpu.fpu_switched_out);
    }
  } else {
    uint64_t value = 0;
    if (!control_registers::read(state, decoded.cr, value)) return false;
    emulate::gpr(frame, decoded.gpr) = value;
  }
  frame.rip += decoded.length;
  return true;
}

// mov to and from DR0-DR7 (pv/rules/debug_register_moves): the vCPU's set_debugreg state, loaded
// into the CPU after a move to one (domain/debug_register_cpu); a refusal is the guest's #UD or
// #GP(0), raised here as Xen's emulator raises it.
constexpr unsigned kInvalidOpcode = 6, kGeneralProtection = 13;
bool emulate_debug_register(Vcpu& vcpu, TrapFrame& frame, const FetchedInstruction& fetched) {
  const control_registers::Decoded move = debug_register_moves::decode(fetched.bytes, fetched.count);
  if (!move.valid) return false;
  const bool cr4_de = vcpu.guest_cr4 & control_registers::cr4_de;
  switch (debug_register_moves::perform(vcpu.debug, move, emulate::gpr(frame, move.gpr), cr4_de)) {
    case debug_register_moves::Outcome::done:
      if (move.to_cr) debug_register_cpu::load(vcpu.debug);
      frame.rip += move.length;
      return true;
    case debug_register_moves::Outcome::invalid_opcode:
      pv::inject_exception(vcpu, frame, kInvalidOpcode, 0);
      return true;
    case debug_register_moves::Outcome::general_protection:
      pv::inject_exception(vcpu, frame, kGeneralProtection, 0);
      return true;
  }
  return false;
}
}  // namespace

bool emulate(Vcpu& vcpu, TrapFrame& frame) {
  if (frame.error_code != 0) return false;
  FetchedInstruction fetched;  // the same fetch the PTE-write emulation makes
  if (!instruction_fetch::fetch(vcpu, frame.rip, fetched)) return false;
  // I/O and cli/sti for whichever code the virtual IOPL allows them to, user mode included.
  if (port_io::emulate(vcpu, frame, fetched.bytes, fetched.count) || emulate_interrupt_flag(vcpu, frame, fetched))
    return true;
  // Guest user code gets no more help: only a kernel may think it runs in ring 0 (Xen's
  // emulator sees CPL 3 there and refuses the rest).
  if (!vcpu.kernel_mode) return false;
  return emulate_msr(vcpu, frame, fetched) || emulate_control_register(vcpu, frame, fetched) ||
         emulate_cache_flush(vcpu, frame, fetched) || emulate_debug_register(vcpu, frame, fetched);
}

}  // namespace privileged_op
