#include "perf/perf_counters.h"

namespace perf {
namespace detail {
uint64_t values[unsigned(Counter::count)];
}  // namespace detail

namespace {
using detail::values;
constexpr unsigned counter_count = unsigned(Counter::count);
const char* const names[counter_count] = {"hypercalls",
                                          "mmu_hypercalls",
                                          "pv_page_faults",
                                          "bounced_exceptions",
                                          "events_delivered",
                                          "ptwr_emulations",
                                          "ptwr_emulation_refusals",
                                          "ptwr_faults",
                                          "ptwr_unhooks",
                                          "ptwr_rehooks",
                                          "ptwr_revalidated",
                                          "tlb_flushes",
                                          "tlb_invlpgs",
                                          "sched_ctx",
                                          "sched_preempt",
                                          "hypercall_continuations",
                                          "cr3_writes",
                                          "guest_syscalls",
                                          "type_change_flushes",
                                          "frames_scrubbed_idle",
                                          "frames_zeroed_when_allocated"};
}  // namespace

const char* name(Counter counter) { return names[unsigned(counter)]; }
void reset() {
  for (uint64_t& v : values) v = 0;
}
}  // namespace perf
