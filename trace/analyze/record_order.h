// The order in which records are analysed: the per-CPU streams merged by TSC, the way
// xenalyze merges them (a CPU's records stay in file order; between CPUs the smaller "order
// TSC" goes first; a TRC_LOST_RECORDS record is visited twice, first at the TSC of the first
// lost record, then at its own TSC, so the gap is accounted as lost time).
#pragma once
#include <cstdint>
#include <vector>

#include "trace/parse/trace_file.h"

namespace trace {

struct Step {
  size_t record;  // index into TraceFile::records
  bool lost_end;  // second visit of a TRC_LOST_RECORDS record
  uint64_t order_tsc;
};

std::vector<Step> order_records(const TraceFile& file);

}  // namespace trace
