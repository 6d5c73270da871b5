// What the hypervisor reports: why each domain stopped (when it stops), and at the end of a
// run counts of what it did; the machine then ends with dom0's shutdown reason as its exit
// value.
#pragma once
#include <stdint.h>
#include "hypervisor/perf_counters.h"

struct Domain;

namespace summary {
namespace detail {
extern uint64_t hypercall_counts[64];
}
// Inline: every hypercall passes here.
inline void count_hypercall(uint64_t number) {
  perf::add(perf::Counter::hypercalls);
  if (number < 64) ++detail::hypercall_counts[number];
}
// Once per domain, when it has stopped: its detached page tables are validated and the
// reason printed (Xen's "Domain N shut down: reason ..." style).
void domain_stopped(Domain& domain);
[[noreturn]] void no_domain_left();
}  // namespace summary
