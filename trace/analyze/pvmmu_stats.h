// Statistics about the PV MMU paths from our hypervisor's records (and Xen's PV records):
// count and rate of every event type, the cost of paired records (fault -> resolution,
// unhook -> rehook), PTEs changed per unhooked page-table page, flushes by scope and reason.
// Pairing rules are documented in trace/EVENTS.md.
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "trace/analyze/cycle_summary.h"
#include "trace/analyze/record_order.h"
#include "trace/analyze/work_clock.h"

namespace trace {

struct PairStats {
    CycleSummary cost;
    uint64_t unmatched = 0;   // a start with no end (or an end with no start)
};

struct PvmmuStats {
    uint64_t first_tsc = 0, last_tsc = 0;
    std::map<uint32_t, uint64_t> events;          // event id -> count
    std::map<uint32_t, uint64_t> hypercalls;      // op -> count (calls and multicall subcalls)
    PairStats fault_to_emulation, fault_to_unhook, fault_to_detach, unhook_to_rehook;
    uint64_t faults_unresolved = 0;               // bounced to the guest (no resolution record)
    std::map<uint32_t, uint64_t> ptes_per_table;  // entries changed per rehook -> tables
    uint64_t ptes_revalidated = 0, ptes_refused = 0;
    std::map<std::string, uint64_t> flushes;      // "local/unhook" -> count
    uint64_t audits = 0, audit_frames = 0, audit_mismatches = 0;
    uint64_t lost_records = 0;

    uint64_t cycles() const { return last_tsc - first_tsc; }
};

PvmmuStats compute_pvmmu_stats(const TraceFile& file, const std::vector<Step>& steps, const WorkClock& clock);

const char* flush_scope_name(uint32_t scope);
const char* flush_reason_name(uint32_t reason);

} // namespace trace
