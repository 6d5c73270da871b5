// Statistics about the PV MMU paths from our hypervisor's records (and Xen's PV records):
// count and rate of every event type, the page faults bounced to the guest, the cost of paired
// records (our PTE_WRITE_FAULT -> its resolution, unhook -> rehook), PTEs changed per unhooked
// page-table page, flushes by scope and reason.
// Pairing rules are documented in trace/EVENTS.md.
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "trace/analyze/checked.h"
#include "trace/analyze/cycle_summary.h"
#include "trace/analyze/fault_pairing.h"
#include "trace/analyze/record_order.h"
#include "trace/analyze/work_clock.h"

namespace trace {

struct PairStats {
  CycleSummary cost;       // cycles from the start record to the one that resolved it
  uint64_t unmatched = 0;  // an end with no start (every emulation of a Xen trace), or a start with no end
};

// Counts are 64-bit and sums of record fields saturate (trace/analyze/checked.h): a corrupt
// trace gives absurd figures, never a wrapped one.
struct PvmmuStats {
  uint64_t first_tsc = 0, last_tsc = 0;
  std::map<uint32_t, uint64_t> events;      // event id -> count
  std::map<uint32_t, uint64_t> hypercalls;  // op -> count (calls and multicall subcalls)
  // Our PTE_WRITE_FAULT paired with what resolved it (trace/analyze/fault_pairing.h).
  PairStats fault_to_emulation, fault_to_unhook, fault_to_detach, unhook_to_rehook;
  uint64_t pte_write_faults = 0;                // PTE_WRITE_FAULT: taken over by the PTE-write paths
  uint64_t pte_write_faults_bounced = 0;        // ... then bounced after all (not emulable, refused)
  uint64_t pte_write_faults_unresolved = 0;     // ... with no resolution record (lost, end of trace)
  uint64_t faults_bounced = 0;                  // TRC_PV_PAGE_FAULT: every fault the guest was given
  std::map<uint32_t, uint64_t> ptes_per_table;  // entries changed per rehook -> tables
  uint64_t ptes_revalidated = 0, ptes_refused = 0;
  std::map<std::string, uint64_t> flushes;  // "local/unhook" -> count
  uint64_t audits = 0, audit_frames = 0, audit_mismatches = 0;
  uint64_t lost_records = 0;

  uint64_t cycles() const { return elapsed(first_tsc, last_tsc); }
};

PvmmuStats compute_pvmmu_stats(const TraceFile& file, const std::vector<Step>& steps, const WorkClock& clock);

const char* flush_scope_name(uint32_t scope);
const char* flush_reason_name(uint32_t reason);

}  // namespace trace
