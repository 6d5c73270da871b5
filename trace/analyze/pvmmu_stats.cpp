#include "trace/analyze/pvmmu_stats.h"

#include "trace/format/events.h"
#include "trace/format/framing.h"

namespace trace {

const char* flush_scope_name(uint32_t scope) { return scope == 0 ? "local" : scope == 1 ? "all" : "?"; }

const char* flush_reason_name(uint32_t reason) {
  switch (events::FlushReason(reason)) {
    case events::FlushReason::unhook: return "unhook";
    case events::FlushReason::rehook: return "rehook";
    case events::FlushReason::guest_request: return "guest_request";
    case events::FlushReason::base_pointer: return "base_pointer";
    case events::FlushReason::validation: return "validation";
    case events::FlushReason::other: return "other";
  }
  return "unknown";
}

namespace {

// Open pairs: our faults (FaultPairing, per CPU), the pending unhook per L1 frame.
class Pairing {
 public:
  Pairing(PvmmuStats& stats, const WorkClock& clock) : s_(stats), clock_(clock) {}

  void record(const ParsedRecord& r) {
    using namespace events;
    FaultResolution resolved = faults_.record(r);
    switch (r.event) {
      case kPvPageFault:
        s_.faults_bounced++;
        if (resolved.outcome == FaultOutcome::bounced) s_.pte_write_faults_bounced++;
        break;
      case kPvPtwrEmulation: pair(r, resolved, s_.fault_to_emulation); break;
      case kPtwrUnhook:
        pair(r, resolved, s_.fault_to_unhook);
        unhooked_[r.extra64(0)] = r.tsc;
        break;
      case kPtwrDetachInactive:
        pair(r, resolved, s_.fault_to_detach);
        unhooked_[r.extra64(0)] = r.tsc;
        break;
      case kPtwrRehook: rehook(r); break;
      default: break;
    }
  }

  void finish() {
    faults_.finish();
    s_.pte_write_faults = faults_.faults();
    s_.pte_write_faults_unresolved = faults_.unresolved();
    s_.unhook_to_rehook.unmatched += unhooked_.size();
  }

 private:
  void pair(const ParsedRecord& r, const FaultResolution& resolved, PairStats& pair) {
    if (resolved.outcome == FaultOutcome::none)
      pair.unmatched++;
    else
      pair.cost.add(clock_.cycles(resolved.fault.tsc, r.tsc));
  }

  void rehook(const ParsedRecord& r) {
    if (r.extra_count >= 5) {
      s_.ptes_per_table[r.extra[2]]++;
      s_.ptes_revalidated = saturating_add(s_.ptes_revalidated, r.extra[3]);
      s_.ptes_refused = saturating_add(s_.ptes_refused, r.extra[4]);
    }
    auto it = unhooked_.find(r.extra64(0));
    if (it == unhooked_.end()) {
      s_.unhook_to_rehook.unmatched++;
      return;
    }
    s_.unhook_to_rehook.cost.add(clock_.cycles(it->second, r.tsc));
    unhooked_.erase(it);
  }

  PvmmuStats& s_;
  const WorkClock& clock_;
  FaultPairing faults_;
  std::map<uint64_t, uint64_t> unhooked_;
};

void count_other(PvmmuStats& s, const ParsedRecord& r) {
  using namespace events;
  if ((r.event == kPvHypercallV2 || r.event == kPvHypercallSubcall) && r.extra_count >= 1)
    s.hypercalls[r.extra[0] & ~uint32_t(TRC_PV_HYPERCALL_V2_ARG_MASK)]++;
  else if (r.event == kTlbFlush && r.extra_count >= 2)
    s.flushes[std::string(flush_scope_name(r.extra[0])) + "/" + flush_reason_name(r.extra[1])]++;
  else if (r.event == kAuditResult && r.extra_count >= 2) {
    s.audits++;
    s.audit_frames = saturating_add(s.audit_frames, r.extra[0]);
    s.audit_mismatches = saturating_add(s.audit_mismatches, r.extra[1]);
  } else if (r.event == kLostRecords && r.extra_count >= 1)
    s.lost_records = saturating_add(s.lost_records, r.extra[0]);
}

}  // namespace

PvmmuStats compute_pvmmu_stats(const TraceFile& file, const std::vector<Step>& steps, const WorkClock& clock) {
  PvmmuStats s;
  Pairing pairing(s, clock);
  for (const Step& step : steps) {
    if (step.lost_end) continue;
    const ParsedRecord& r = file.records[step.record];
    s.events[r.event]++;
    if (r.has_tsc && r.tsc) {
      if (!s.first_tsc || r.tsc < s.first_tsc) s.first_tsc = r.tsc;
      if (r.tsc > s.last_tsc) s.last_tsc = r.tsc;
    }
    pairing.record(r);
    count_other(s, r);
  }
  pairing.finish();
  return s;
}

}  // namespace trace
