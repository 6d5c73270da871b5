// --compare A B: two traces side by side (counts, rates, paired costs, operation costs).
#pragma once
#include <cstdio>

#include "trace/analyze/analysis.h"

namespace trace {

void print_comparison(std::FILE* out, const Analysis& a, const Analysis& b);

}  // namespace trace
