// Pure: the round-robin choice of the next vCPU on the one physical CPU. A vCPU's place in the
// round is its domain's slot in the domain table, then its id (place = slot * vCPUs per slot +
// id), so every vCPU of every domain gets its turn; the caller lists the places of the
// runnable vCPUs in ascending order.
#pragma once
#include <stdint.h>

namespace run_queue {
constexpr int none = -1;

// The vCPU's place.
constexpr int place(unsigned domain_slot, unsigned vcpus_per_slot, unsigned vcpu_id) {
  return int(domain_slot * vcpus_per_slot + vcpu_id);
}

// The first runnable place after `current` (wrapping around), so every runnable vCPU gets its
// turn; `current` itself only when no other place is runnable; `none` when nothing is.
// `current` may be `none` (the CPU was idle): the search then starts at place 0.
int next_round_robin(const int* runnable, unsigned count, int current);
}  // namespace run_queue
