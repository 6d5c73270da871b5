// Which fault a resolution record belongs to. Xen records TRC_PV_PAGE_FAULT only for the faults
// it bounces to the guest, so a Xen trace cannot say which fault started an emulation or an
// unhook: pairing its records would pair unrelated ones. Our hypervisor also writes
// PTE_WRITE_FAULT when it takes a fault over (trace/EVENTS.md); only such a fault is paired,
// and only with the record on the same CPU that names the same thing:
//
//   PTE_WRITE_FAULT (rip, address, table) -> PTWR_EMULATION of that address    (emulated)
//                                         -> PTWR_UNHOOK of that table         (unhooked)
//                                         -> PTWR_DETACH_INACTIVE of that table (detached)
//                                         -> TRC_PV_PAGE_FAULT of that address (refused, bounced)
//
// A resolution record without such a fault before it resolves nothing (all of Xen's do).
#pragma once
#include <cstdint>
#include <map>

#include "trace/parse/trace_file.h"

namespace trace {

struct PteWriteFault {
  uint64_t tsc = 0;
  uint64_t rip = 0;
  uint64_t address = 0;
  uint64_t table_mfn = 0;
};

enum class FaultOutcome { none, emulated, unhooked, detached_inactive, bounced };

struct FaultResolution {
  FaultOutcome outcome = FaultOutcome::none;  // none: the record resolves no fault of ours
  PteWriteFault fault;                        // the fault it resolves
};

class FaultPairing {
 public:
  // Records in analysis order (per CPU in file order). Returns what `r` resolves.
  FaultResolution record(const ParsedRecord& r);

  uint64_t faults() const { return faults_; }  // PTE_WRITE_FAULT records seen
  // Faults of ours that nothing resolved: followed by another fault, by lost records, or by
  // the end of the trace (counted when finish() is called).
  uint64_t unresolved() const { return unresolved_; }
  void finish();

 private:
  std::map<uint32_t, PteWriteFault> open_;  // the fault being handled, per CPU
  uint64_t faults_ = 0;
  uint64_t unresolved_ = 0;
};

const char* fault_outcome_name(FaultOutcome outcome);

}  // namespace trace
