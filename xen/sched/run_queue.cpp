#include "sched/run_queue.h"

namespace run_queue {
int next_round_robin(const int* runnable, unsigned count, int current) {
  for (unsigned i = 0; i < count; ++i)
    if (runnable[i] > current) return runnable[i];
  return count ? runnable[0] : none;
}
}  // namespace run_queue
