// Runs the invariant audit of the frame table (mm/audit) against what the domains hold:
// every frame's general and type counts must match the page tables that reference it, and
// every frame a guest domain owns must be on that domain's page list (a frame owned by an id
// no live domain has, or by an earlier domain of a reused id, is reported as an orphan).
#pragma once
#include <stdint.h>

namespace frame_audit {
struct Result {
  bool ran = false;  // false if no scratch memory could be found
  uint64_t mismatches = 0;
};
// Prints "audit: clean" or the first mismatches, and returns the result.
Result run_and_report();
}  // namespace frame_audit
