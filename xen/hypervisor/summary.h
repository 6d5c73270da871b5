// What the hypervisor reports at the end of a run: why the domain stopped, counts of what
// it did, and then the machine ends with the shutdown reason as its exit value.
#pragma once
#include <stdint.h>

struct Domain;

namespace summary {
void count_hypercall(unsigned number);
[[noreturn]] void no_domain_left(Domain& last);
}  // namespace summary
