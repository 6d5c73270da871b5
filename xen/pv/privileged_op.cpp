#include "pv/privileged_op.h"
#include "arch/x86/cpu/registers.h"
#include "domain/domain.h"
#include "emulate/instruction_fetch.h"
#include "pv/interrupt_flag.h"
#include "pv/msr_emulation.h"
#include "pv/port_io.h"

namespace privileged_op {
namespace {
using instruction_fetch::FetchedInstruction;

msr_emulation::SegmentBases bases_of(const Vcpu& vcpu) { return {vcpu.fs_base, vcpu.gs_base_kernel, vcpu.gs_base_user}; }

// The new bases into the vCPU and the CPU (the guest is in kernel mode: GS is the kernel's).
void load_bases(Vcpu& vcpu, const msr_emulation::SegmentBases& bases) {
  vcpu.fs_base = bases.fs;
  vcpu.gs_base_kernel = bases.gs_kernel;
  vcpu.gs_base_user = bases.gs_user;
  cpu::write_msr(cpu::msr::fs_base, bases.fs);
  cpu::write_msr(cpu::msr::gs_base, vcpu.active_gs_base());
}

bool emulate_msr(Vcpu& vcpu, TrapFrame& frame, const FetchedInstruction& fetched) {
  const msr_emulation::Decoded decoded = msr_emulation::decode(fetched.bytes, fetched.count);
  const uint32_t msr = uint32_t(frame.rcx);
  msr_emulation::SegmentBases bases = bases_of(vcpu);
  switch (decoded.instruction) {
    case msr_emulation::Instruction::rdmsr: {
      uint64_t value = 0;
      if (!msr_emulation::read(msr, bases, value)) return false;
      frame.rax = uint32_t(value);
      frame.rdx = value >> 32;
      break;
    }
    case msr_emulation::Instruction::wrmsr:
      if (!msr_emulation::write(msr, (frame.rdx << 32) | uint32_t(frame.rax), bases)) return false;
      load_bases(vcpu, bases);
      break;
    case msr_emulation::Instruction::none: return false;
  }
  frame.rip += decoded.length;
  return true;
}
// cli / sti: no-ops for a kernel with I/O privilege, as Xen's (pv/interrupt_flag.h).
bool emulate_interrupt_flag(const Vcpu& vcpu, TrapFrame& frame, const FetchedInstruction& fetched) {
  const unsigned length = interrupt_flag::instruction_length(fetched.bytes, fetched.count);
  if (length == 0 || !interrupt_flag::permitted(vcpu.iopl)) return false;
  frame.rip += length;
  return true;
}
}  // namespace

bool emulate(Vcpu& vcpu, TrapFrame& frame) {
  // Guest user code gets no help: only a kernel may think it runs in ring 0 (Xen's check).
  if (!vcpu.kernel_mode || frame.error_code != 0) return false;
  FetchedInstruction fetched;  // the same fetch the PTE-write emulation makes
  if (!instruction_fetch::fetch(vcpu, frame.rip, fetched)) return false;
  return port_io::emulate(vcpu, frame, fetched.bytes, fetched.count) || emulate_msr(vcpu, frame, fetched) ||
         emulate_interrupt_flag(vcpu, frame, fetched);
}

}  // namespace privileged_op
