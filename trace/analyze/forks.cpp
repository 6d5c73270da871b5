#include "trace/analyze/forks.h"

#include <cstdio>
#include <map>
#include <memory>

#include "trace/analyze/fault_pairing.h"
#include "trace/format/events.h"
#include "trace/parse/event_catalog.h"

namespace trace {

const char* step_kind_name(StepKind kind) {
  switch (kind) {
    case StepKind::fault: return "fault";
    case StepKind::bounced: return "bounced";
    case StepKind::emulation: return "emulate";
    case StepKind::unhook: return "unhook";
    case StepKind::detach_inactive: return "detach-inactive";
    case StepKind::direct_writes: return "direct-writes";
    case StepKind::rehook: return "rehook";
    case StepKind::slot_evict: return "slot-evict";
    case StepKind::flush: return "flush";
    case StepKind::invlpg: return "invlpg";
    case StepKind::hypercall: return "hypercall";
  }
  return "?";
}

const char* operation_kind_name(uint32_t kind) {
  switch (events::OperationKind(kind)) {
    case events::OperationKind::fork: return "fork";
    case events::OperationKind::exec: return "exec";
    case events::OperationKind::exit: return "exit";
    case events::OperationKind::other: return "other";
  }
  return "op";
}

const char* ForkStory::mode() const { return unhooks || rehooks ? "writable" : emulations ? "emulate" : "hypercall"; }

namespace {

std::string hex(uint64_t v) {
  char text[24];
  std::snprintf(text, sizeof text, "%#llx", (unsigned long long)v);
  return text;
}

// Builds one story from the records of its CPU. Faults are paired with what resolved them by
// FaultPairing's rules (only our PTE_WRITE_FAULT, same address or table).
class StoryBuilder {
 public:
  StoryBuilder(ForkStory& story, const WorkClock& clock) : s_(story), clock_(clock) {}

  void add(const ParsedRecord& r) {
    using namespace events;
    FaultResolution resolved = faults_.record(r);
    uint64_t cost = resolved.outcome == FaultOutcome::none ? 0 : clock_.cycles(resolved.fault.tsc, r.tsc);
    switch (r.event) {
      case kPteWriteFault:
        s_.faults++;
        push(StepKind::fault, r.tsc, 0,
             "va " + hex(r.extra64(2)) + " rip " + hex(r.extra64(0)) + " table mfn " + hex(r.extra64(4)));
        break;
      case kPvPageFault:
        s_.bounced_faults++;
        push(StepKind::bounced, r.tsc, cost,
             "va " + hex(r.extra64(2)) + " ec " + hex(r.extra[4]) +
                 (resolved.outcome == FaultOutcome::bounced ? " (taken over, then refused)" : ""));
        break;
      case kPvPtwrEmulation:
        s_.emulations++;
        s_.emulation_cycles = saturating_add(s_.emulation_cycles, cost);
        push(StepKind::emulation, r.tsc, cost, "pte " + hex(r.extra64(0)) + " at " + hex(r.extra64(2)));
        break;
      case kPtwrUnhook:
        s_.unhooks++;
        unhooked_[r.extra64(0)] = r.tsc;
        push(StepKind::unhook, r.tsc, cost, "l1 mfn " + hex(r.extra64(0)) + " l2 slot " + std::to_string(r.extra[2]));
        break;
      case kPtwrDetachInactive:
        s_.unhooks++;
        unhooked_[r.extra64(0)] = r.tsc;
        push(StepKind::detach_inactive, r.tsc, cost, "l1 mfn " + hex(r.extra64(0)));
        break;
      case kPtwrRehook: rehook(r); break;
      case kPtwrSlotEvict:
        push(StepKind::slot_evict, r.tsc, 0, "l1 mfn " + hex(r.extra64(0)) + " slot " + std::to_string(r.extra[2]));
        break;
      case kTlbFlush:
        s_.flushes++;
        push(StepKind::flush, r.tsc, 0, std::string(flush_scope(r.extra[0])) + " reason " + std::to_string(r.extra[1]));
        break;
      case kInvlpg: push(StepKind::invlpg, r.tsc, 0, "va " + hex(r.extra64(0))); break;
      case kPvHypercallV2:
      case kPvHypercallSubcall: {
        s_.hypercalls++;
        uint32_t op = r.extra[0] & ~uint32_t(TRC_PV_HYPERCALL_V2_ARG_MASK);
        const char* name = hypercall_name(op);
        push(StepKind::hypercall, r.tsc, 0, name ? name : std::to_string(op));
        break;
      }
      default: break;
    }
  }

 private:
  static const char* flush_scope(uint32_t scope) { return scope == 1 ? "all" : "local"; }

  // A rehook tells how many entries the guest wrote directly while the table was detached:
  // that is the "inferred direct writes" step, placed just before the rehook.
  void rehook(const ParsedRecord& r) {
    uint32_t changed = r.extra[2], revalidated = r.extra[3], refused = r.extra[4];
    auto it = unhooked_.find(r.extra64(0));
    uint64_t cost = 0;
    if (it != unhooked_.end()) {
      cost = clock_.cycles(it->second, r.tsc);
      unhooked_.erase(it);
    }
    s_.rehooks++;
    s_.direct_writes = saturating_add(s_.direct_writes, changed);
    s_.unhooked_cycles = saturating_add(s_.unhooked_cycles, cost);
    if (changed) push(StepKind::direct_writes, r.tsc, 0, std::to_string(changed) + " entries written by the guest");
    push(StepKind::rehook, r.tsc, cost,
         "l1 mfn " + hex(r.extra64(0)) + " changed " + std::to_string(changed) + " revalidated " +
             std::to_string(revalidated) + " refused " + std::to_string(refused));
  }

  void push(StepKind kind, uint64_t tsc, uint64_t cost, std::string detail) {
    if (s_.steps.size() < kMaxSteps) s_.steps.push_back({kind, tsc, cost, std::move(detail)});
  }

  static constexpr size_t kMaxSteps = 100000;
  ForkStory& s_;
  const WorkClock& clock_;
  FaultPairing faults_;
  std::map<uint64_t, uint64_t> unhooked_;
};

}  // namespace

ForkStories collect_forks(const TraceFile& file, const std::vector<Step>& steps, const WorkClock& clock, size_t limit) {
  ForkStories out;
  std::map<uint32_t, std::pair<ForkStory, int>> open;
  std::map<uint32_t, std::unique_ptr<StoryBuilder>> builders;
  auto close = [&](uint32_t cpu, bool complete) {
    auto it = open.find(cpu);
    if (it == open.end()) return;
    ForkStory& story = it->second.first;
    story.complete = complete;
    uint64_t span = elapsed(story.begin_tsc, story.end_tsc);
    story.capture_cycles = elapsed(clock.cycles(story.begin_tsc, story.end_tsc), span);
    if (out.stories.size() < limit)
      out.stories.push_back(std::move(it->second.first));
    else
      out.dropped++;
    open.erase(it);
    builders.erase(cpu);
  };
  for (const Step& step : steps) {
    if (step.lost_end) continue;
    const ParsedRecord& r = file.records[step.record];
    if (r.event == events::kOperationBegin && r.extra_count >= 2) {
      out.markers++;
      close(r.cpu, false);  // an unterminated story ends where the next begins
      ForkStory story;
      story.kind = r.extra[0];
      story.id = r.extra[1];
      story.cpu = r.cpu;
      story.begin_tsc = story.end_tsc = r.tsc;
      auto& slot = open[r.cpu];
      slot.first = std::move(story);
      builders[r.cpu] = std::make_unique<StoryBuilder>(slot.first, clock);
      continue;
    }
    auto it = open.find(r.cpu);
    if (it == open.end()) continue;
    ForkStory& story = it->second.first;
    if (r.event == events::kCaptureDrain)
      continue;  // dom0's work, not a step of the operation (WorkClock takes it out)
    if (r.tsc > story.end_tsc) story.end_tsc = r.tsc;
    if (r.event == events::kOperationEnd && r.extra_count >= 2 && r.extra[1] == story.id) {
      out.markers++;
      close(r.cpu, true);
      continue;
    }
    builders[r.cpu]->add(r);
  }
  while (!open.empty()) close(open.begin()->first, false);
  return out;
}

}  // namespace trace
