#include "arch/probe.h"

extern "C" char probe_store64_insn[], probe_store64_fixup[], probe_rep_stosq_insn[], probe_rep_stosq_fixup[],
    probe_movnti_insn[], probe_movnti_fixup[], probe_load64_insn[], probe_load64_fixup[];

namespace kernel {
bool probe_fixup(TrapFrame& frame) {
  struct Probe {
    const char* instruction;
    const char* fixup;
  };
  const Probe probes[] = {{probe_store64_insn, probe_store64_fixup},
                          {probe_rep_stosq_insn, probe_rep_stosq_fixup},
                          {probe_movnti_insn, probe_movnti_fixup},
                          {probe_load64_insn, probe_load64_fixup}};
  if (frame.vector != 14) return false;
  for (const Probe& probe : probes) {
    if (frame.rip == reinterpret_cast<uint64_t>(probe.instruction)) {
      frame.rip = reinterpret_cast<uint64_t>(probe.fixup);
      return true;
    }
  }
  return false;
}
}  // namespace kernel
