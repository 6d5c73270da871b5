#include "pv/invalid_op.h"
#include "arch/x86/cpu/registers.h"
#include "domain/domain.h"
#include "pv/instruction_fetch.h"
#include "memory/machine.h"
#include "pv/rules/cpuid_policy.h"
#include "pv/rules/forced_emulation.h"
#include "pv/guest_entry.h"
#include "time/clock.h"

namespace invalid_op {
namespace {
constexpr unsigned vector_page_fault = 14;
constexpr uint64_t cr4_osxsave = 1u << 18;

cpuid_policy::Leaf host_cpuid(const void*, uint32_t leaf, uint32_t subleaf) {
  const cpu::CpuidResult r = cpu::cpuid(leaf, subleaf);
  return cpuid_policy::Leaf{r.eax, r.ebx, r.ecx, r.edx};
}

cpuid_policy::Host host_facts() {
  cpuid_policy::Host host;
  host.query = host_cpuid;
  host.cr4_osxsave = cpu::read_cr4() & cr4_osxsave;
  host.highest_mfn = machine::nr_frames() - 1;
  host.tsc_khz = uint32_t(system_clock::tsc_hz() / 1000);
  host.tsc_to_ns_mul = system_clock::scale().mul_frac;
  host.tsc_to_ns_shift = system_clock::scale().shift;
  return host;
}

cpuid_policy::Leaf forced_cpuid(const Vcpu& vcpu, uint32_t leaf, uint32_t subleaf) {
  cpuid_policy::Asker asker;
  asker.kernel_mode = vcpu.kernel_mode;
  asker.forced_emulation = true;
  asker.hardware_domain = vcpu.domain->privileged;
  asker.guest_cr4 = vcpu.guest_cr4;
  return cpuid_policy::guest_cpuid(host_facts(), asker, leaf, subleaf);
}

void emulate_cpuid(const Vcpu& vcpu, TrapFrame& frame) {
  const cpuid_policy::Leaf leaf = forced_cpuid(vcpu, uint32_t(frame.rax), uint32_t(frame.rcx));
  frame.rax = leaf.a;
  frame.rbx = leaf.b;
  frame.rcx = leaf.c;
  frame.rdx = leaf.d;
  frame.rip += forced_emulation::kInstructionLength;
}
}  // namespace

uint32_t guest_cpuid_register(const Vcpu& vcpu, uint32_t leaf, uint32_t subleaf, unsigned index) {
  const cpuid_policy::Leaf r = forced_cpuid(vcpu, leaf, subleaf);
  const uint32_t registers[] = {r.a, r.b, r.c, r.d};
  return registers[index & 3];
}

bool emulate(Vcpu& vcpu, TrapFrame& frame) {
  instruction_fetch::FetchedInstruction fetched;
  if (!instruction_fetch::fetch(vcpu, frame.rip, fetched)) fetched.count = 0;
  const forced_emulation::Decision decision = forced_emulation::decide(fetched.bytes, fetched.count);
  switch (decision.verdict) {
    case forced_emulation::Verdict::not_forced: return false;
    case forced_emulation::Verdict::fault: {
      // Xen's pv_inject_page_fault(0, first unreadable byte): a read, error code 0.
      const uint64_t address = frame.rip + decision.fault_offset;
      vcpu.info()->arch.cr2 = address;
      pv::inject_exception(vcpu, frame, vector_page_fault, 0);
      return true;
    }
    case forced_emulation::Verdict::cpuid: emulate_cpuid(vcpu, frame); return true;
  }
  return false;
}
}  // namespace invalid_op
