// What the hypervisor reports: why each domain stopped (when it stops), and at the end of a
// run counts of what it did; the machine then ends with dom0's shutdown reason as its exit
// value.
#pragma once
#include <stdint.h>

struct Domain;

namespace summary {
// At boot: the scheduler, which sees domains stop and finds none left, reports through here.
void init();
// Once per domain, when it has stopped: its detached page tables are validated and the
// reason printed (Xen's "Domain N shut down: reason ..." style).
void domain_stopped(Domain& domain);
[[noreturn]] void no_domain_left();
}  // namespace summary
