// What the hypervisor reports at the end of a run: why the domain stopped, counts of what
// it did, and then the machine ends with the shutdown reason as its exit value.
#pragma once
#include <stdint.h>

struct Domain;

namespace summary {
enum class Counter { hypercalls, bounced_exceptions, events_delivered, guest_page_faults, count };
void add(Counter counter, uint64_t n = 1);
void count_hypercall(unsigned number);
[[noreturn]] void no_domain_left(const Domain& last);
}  // namespace summary
