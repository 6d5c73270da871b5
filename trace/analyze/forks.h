// Per-operation stories: between an OPERATION_BEGIN and the matching OPERATION_END on a CPU
// (the guest marks fork, exec, exit), the ordered list of faults, emulations, unhooks,
// inferred direct writes, rehooks and flushes, with what each step and the whole cost.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "trace/analyze/checked.h"
#include "trace/analyze/record_order.h"
#include "trace/analyze/work_clock.h"

namespace trace {

// fault: a PTE write the hypervisor took over (our PTE_WRITE_FAULT); bounced: a page fault the
// guest was given (TRC_PV_PAGE_FAULT).
enum class StepKind {
  fault,
  bounced,
  emulation,
  unhook,
  detach_inactive,
  direct_writes,
  rehook,
  slot_evict,
  flush,
  invlpg,
  hypercall
};
const char* step_kind_name(StepKind kind);

struct StoryStep {
  StepKind kind;
  uint64_t tsc;
  uint64_t cost = 0;  // cycles since the fault or unhook it resolves (0 if it resolves none)
  std::string detail;
};

struct ForkStory {
  uint32_t id = 0;
  uint32_t kind = 0;  // events::OperationKind
  uint32_t cpu = 0;
  uint64_t begin_tsc = 0, end_tsc = 0;
  bool complete = false;  // saw the END marker
  std::vector<StoryStep> steps;
  // Counts are 64-bit; the sums of cycles and of direct writes saturate (checked.h).
  uint64_t faults = 0, bounced_faults = 0, emulations = 0, unhooks = 0, rehooks = 0, direct_writes = 0, flushes = 0,
           hypercalls = 0;
  uint64_t emulation_cycles = 0;  // fault -> emulation, summed (paired ones only)
  uint64_t unhooked_cycles = 0;   // unhook -> rehook, summed
  // dom0 copying records out in the middle of the operation (CAPTURE_DRAIN): the capture's
  // cost, not the operation's. One CPU runs both, so it would otherwise count as fork time.
  // Step costs (fault -> resolution, unhook -> rehook) leave it out too (WorkClock).
  uint64_t capture_cycles = 0;

  uint64_t cycles() const { return elapsed(capture_cycles, elapsed(begin_tsc, end_tsc)); }
  // "writable" (unhooks seen), "emulate" (emulations only), "hypercall" (neither).
  const char* mode() const;
};

const char* operation_kind_name(uint32_t kind);

// At most `limit` stories are kept (the rest are counted in `dropped`), bounding memory.
struct ForkStories {
  std::vector<ForkStory> stories;
  size_t dropped = 0;
  size_t markers = 0;
};

ForkStories collect_forks(const TraceFile& file, const std::vector<Step>& steps, const WorkClock& clock,
                          size_t limit = 100000);

}  // namespace trace
