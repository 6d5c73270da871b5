// Text reports of our own analyses: event statistics (counts, rates, paired costs), fork
// stories (--forks) and the PTEs-per-table histogram (--ptes-per-table).
#pragma once
#include <cstdio>

#include "trace/analyze/analysis.h"

namespace trace {

void print_event_statistics(std::FILE* out, const Analysis& a);
void print_forks(std::FILE* out, const Analysis& a);
void print_ptes_per_table(std::FILE* out, const Analysis& a);
void print_diagnostics(std::FILE* out, const TraceFile& file, bool verbose);

}  // namespace trace
