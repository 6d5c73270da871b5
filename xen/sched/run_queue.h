// Pure: the round-robin choice of the next vCPU on the one physical CPU. Slots are the
// domain table's (one vCPU per domain); the caller says which are runnable.
#pragma once
#include <stdint.h>

namespace run_queue {
constexpr int none = -1;

// The first runnable slot after `current` (wrapping around), so every runnable vCPU gets its
// turn; `current` itself only when no other slot is runnable; `none` when nothing is.
// `current` may be `none` (the CPU was idle): the search then starts at slot 0.
int next_round_robin(const bool* runnable, unsigned count, int current);

// Whether a vCPU other than `current` is runnable: only then does a time slice need a timer.
bool others_runnable(const bool* runnable, unsigned count, int current);
}  // namespace run_queue
