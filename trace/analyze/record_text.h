// One line per record for --dump-all: time since the first record, CPU, event name, fields.
#pragma once
#include <cstdio>
#include <string>

#include "trace/analyze/analysis.h"

namespace trace {

std::string describe_record(const ParsedRecord& r);
void dump_all(std::FILE* out, const Analysis& a);

}  // namespace trace
