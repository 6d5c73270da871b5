// The per-iteration sequence of a loop a guest marks itself (xenalyze --per-iteration): a guest
// that cannot write our OPERATION_BEGIN/END (Linux) draws each iteration's boundary with a
// hypercall both hypervisors trace, physdev_op (guest/user/bench.c --marker ioperm: Linux's
// PHYSDEVOP_set_iobitmap). Between two markers of one domain lies one iteration; for each, the
// ordered page-table events (mmu_update batches and their entries, mmuext_op, multicalls,
// emulated PTE writes, faults, unhooks and rehooks, flushes) and its hypercalls by op, and over
// all of them the typical iteration (the median by events) and the average, min and max.
//
// A marker is a run of physdev_op records with no page-table work of the domain between them
// (ioperm on, then off, is two hypercalls, and a context switch in between may add more).
// Records are attributed to the domain that runs on their CPU (TRC_SCHED_SWITCH); an iteration
// during which its CPU lost records is counted apart and left out of the figures.
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "trace/analyze/record_order.h"

namespace trace {

enum class LoopEventKind {
  mmu_update,
  mmuext_op,
  multicall,
  update_va_mapping,
  emulation,
  pte_write_fault,
  bounced_fault,
  unhook,
  rehook,
  detach_inactive,
  flush,
  invlpg,
  other_hypercall
};
const char* loop_event_name(LoopEventKind kind);

struct LoopEvent {
  LoopEventKind kind;
  uint64_t tsc = 0;
  uint32_t count = 0;   // mmu_update / mmuext_op / multicall: entries (Xen's count argument, 0 if absent)
  uint32_t detail = 0;  // other_hypercall: op; flush: reason
  bool nested = false;  // inside a multicall (Xen's SUBCALL record)
  // mmu_update / mmuext_op re-entered after the hypervisor preempted it (Xen's continuation:
  // the count carries MMU_UPDATE_PREEMPTED): not a new batch, its entries already counted.
  bool continuation = false;
};

// The figures of one iteration, and the rows --per-iteration prints (name -> value, in order).
struct LoopCounts {
  std::vector<std::pair<std::string, uint64_t>> rows;
  uint64_t get(const std::string& name) const;
};

struct LoopIteration {
  uint32_t cpu = 0;
  uint64_t begin_tsc = 0, end_tsc = 0;
  bool lost = false;  // its CPU lost records meanwhile: not in the figures
  std::vector<LoopEvent> events;
  LoopCounts counts() const;
};

struct LoopAnalysis {
  int domain = 1;
  uint64_t marker_records = 0;  // physdev_op records of the domain
  uint64_t markers = 0;         // runs of them (see above)
  std::vector<LoopIteration> iterations;
  // The typical iteration: the median by number of events among the complete ones (-1: none).
  long typical() const;
};

LoopAnalysis analyse_loop(const TraceFile& file, const std::vector<Step>& steps, int domain);

// Row name -> (typical, average, min, max) over the complete iterations, in row order.
struct LoopFigure {
  std::string name;
  uint64_t typical = 0;
  double average = 0;
  uint64_t min = 0, max = 0;
};
std::vector<LoopFigure> loop_figures(const LoopAnalysis& loop);

// The ordered events of one iteration, runs of the same kind folded into one line
// ("mmu_update x3 entries 1+1+12").
std::vector<std::string> folded_sequence(const LoopIteration& iteration, uint64_t cpu_hz);

std::string loop_report(const LoopAnalysis& loop, uint64_t cpu_hz);

}  // namespace trace
