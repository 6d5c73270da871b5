#include "arch/hostile_probes.h"
#include <xen/xen.h>

extern "C" char probe_iret_fixup[], probe_int3_resume[];
extern "C" char probe_wrmsr_insn[], probe_rdmsr_insn[], probe_msr_fixup[], probe_cli_insn[], probe_sti_insn[],
    probe_wbinvd_insn[];
extern "C" char probe_cr_insn0[], probe_cr_insn1[], probe_cr_insn2[], probe_cr_insn3[], probe_cr_insn4[];
extern "C" char probe_dr_moves[], probe_dr_moves_end[], probe_dr_fixup[];
extern "C" char probe_forced_insn[], probe_forced_cpuid_fixup[], probe_forced_bad_insn[];
extern "C" char probe_int_insn0[], probe_int_insn1[], probe_int_insn2[], probe_int_insn3[];
extern "C" bool probe_iret_armed;
extern "C" uint64_t probe_iret_saved_rsp;

namespace kernel {
namespace {
constexpr uint64_t kBreakpoint = 3;

// An armed iret probe: whatever the refused return raised, the test resumes with the vector
// and error code, on its own stack, with flat selectors (the faulting frame holds the bad
// ones) and events still masked.
bool iret_probe(TrapFrame& frame) {
  if (!probe_iret_armed || frame.vector >= 32) return false;
  frame.rax = (frame.vector << 16) | (frame.error_code & 0xffff);
  frame.rip = reinterpret_cast<uint64_t>(probe_iret_fixup);
  frame.cs = FLAT_KERNEL_CS & ~3ull;  // RPL 0: "kernel context" in a PV frame
  frame.ss = FLAT_KERNEL_SS;
  frame.rsp = probe_iret_saved_rsp;
  frame.rflags = 0x2;
  return true;
}
}  // namespace

// A raw wrmsr, rdmsr, cli, sti, mov to / from a CR, wbinvd or int $n the hypervisor refused (it bounced the CPU's #GP):
// the probe returns the vector and error code.
static bool msr_probe(TrapFrame& frame) {
  const uint64_t rip = frame.rip;
  if (rip != reinterpret_cast<uint64_t>(probe_wrmsr_insn) && rip != reinterpret_cast<uint64_t>(probe_rdmsr_insn) &&
      rip != reinterpret_cast<uint64_t>(probe_cli_insn) && rip != reinterpret_cast<uint64_t>(probe_sti_insn) &&
      rip != reinterpret_cast<uint64_t>(probe_cr_insn0) && rip != reinterpret_cast<uint64_t>(probe_cr_insn1) &&
      rip != reinterpret_cast<uint64_t>(probe_cr_insn2) && rip != reinterpret_cast<uint64_t>(probe_cr_insn3) &&
      rip != reinterpret_cast<uint64_t>(probe_cr_insn4) && rip != reinterpret_cast<uint64_t>(probe_wbinvd_insn) &&
      rip != reinterpret_cast<uint64_t>(probe_int_insn0) && rip != reinterpret_cast<uint64_t>(probe_int_insn1) &&
      rip != reinterpret_cast<uint64_t>(probe_int_insn2) && rip != reinterpret_cast<uint64_t>(probe_int_insn3))
    return false;
  frame.rax = (frame.vector << 16) | (frame.error_code & 0xffff);
  frame.rip = reinterpret_cast<uint64_t>(probe_msr_fixup);
  return true;
}

// A forced-emulation probe the hypervisor did not emulate: the probe returns the vector and
// error code (the cpuid probe through its own fixup, which restores the registers it saved).
static bool forced_emulation_probe(TrapFrame& frame) {
  const uint64_t rip = frame.rip;
  const bool cpuid = rip == reinterpret_cast<uint64_t>(probe_forced_insn);
  if (!cpuid && rip != reinterpret_cast<uint64_t>(probe_forced_bad_insn)) return false;
  frame.rax = (frame.vector << 16) | (frame.error_code & 0xffff);
  frame.rip = reinterpret_cast<uint64_t>(cpuid ? probe_forced_cpuid_fixup : probe_msr_fixup);
  return true;
}

// A debug-register move that faulted (arch/debugreg_probes.S): any instruction of its table.
static bool debug_register_probe(TrapFrame& frame) {
  if (frame.rip < reinterpret_cast<uint64_t>(probe_dr_moves) ||
      frame.rip >= reinterpret_cast<uint64_t>(probe_dr_moves_end))
    return false;
  frame.rax = (frame.vector << 16) | (frame.error_code & 0xffff);
  frame.rip = reinterpret_cast<uint64_t>(probe_dr_fixup);
  return true;
}

bool hostile_probe_fixup(TrapFrame& frame) {
  if (iret_probe(frame)) return true;
  if (debug_register_probe(frame)) return true;
  if (msr_probe(frame)) return true;
  if (forced_emulation_probe(frame)) return true;
  // int3 is a trap: the frame already points after it.
  return frame.vector == kBreakpoint && frame.rip == reinterpret_cast<uint64_t>(probe_int3_resume);
}
}  // namespace kernel
