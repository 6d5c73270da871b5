// The whole analysis as one JSON document (--json): machine-readable counterpart of the
// summary, the PV-MMU statistics and the fork stories.
#pragma once
#include <string>

#include "trace/analyze/analysis.h"

namespace trace {

std::string json_report(const Analysis& a, bool with_steps);

}  // namespace trace
