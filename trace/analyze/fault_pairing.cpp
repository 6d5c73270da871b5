#include "trace/analyze/fault_pairing.h"

#include "trace/format/events.h"

namespace trace {
namespace {

// Where each resolution record keeps what it names (trace/EVENTS.md); extra64 reads 0 past a
// short record, and a short record is not taken for a resolution at all.
struct Resolver {
  FaultOutcome outcome;
  bool by_table;       // names the L1 table (else the address written)
  unsigned word;       // extra word of that value
  unsigned min_extra;  // extra words it must have
};

bool resolver_for(uint32_t event, Resolver& out) {
  using namespace events;
  switch (event) {
    case kPvPtwrEmulation: out = {FaultOutcome::emulated, false, 2, 6}; return true;
    case kPtwrUnhook: out = {FaultOutcome::unhooked, true, 0, 3}; return true;
    case kPtwrDetachInactive: out = {FaultOutcome::detached_inactive, true, 0, 2}; return true;
    case kPvPageFault: out = {FaultOutcome::bounced, false, 2, 5}; return true;
    default: return false;
  }
}

}  // namespace

const char* fault_outcome_name(FaultOutcome outcome) {
  switch (outcome) {
    case FaultOutcome::none: return "none";
    case FaultOutcome::emulated: return "emulated";
    case FaultOutcome::unhooked: return "unhooked";
    case FaultOutcome::detached_inactive: return "detached";
    case FaultOutcome::bounced: return "bounced";
  }
  return "?";
}

FaultResolution FaultPairing::record(const ParsedRecord& r) {
  using namespace events;
  if (r.event == kPteWriteFault && r.extra_count == pvhv_extra_words(kPteWriteFault)) {
    faults_++;
    auto [it, inserted] = open_.try_emplace(r.cpu);
    if (!inserted) unresolved_++;  // the previous fault on this CPU never got its resolution record
    it->second = {r.tsc, r.extra64(0), r.extra64(2), r.extra64(4)};
    return {};
  }
  if (r.event == kLostRecords) {  // the resolution may be among the lost ones: pair nothing
    unresolved_ += open_.erase(r.cpu);
    return {};
  }
  Resolver how;
  if (!resolver_for(r.event, how) || r.extra_count < how.min_extra) return {};
  auto it = open_.find(r.cpu);
  if (it == open_.end()) return {};
  uint64_t named = r.extra64(how.word);
  if (named != (how.by_table ? it->second.table_mfn : it->second.address)) return {};
  FaultResolution resolution{how.outcome, it->second};
  open_.erase(it);
  return resolution;
}

void FaultPairing::finish() {
  unresolved_ += open_.size();
  open_.clear();
}

}  // namespace trace
