#include "sched/run_queue.h"

namespace run_queue {
int next_round_robin(const bool* runnable, unsigned count, int current) {
  unsigned start = current == none ? 0 : unsigned(current) + 1;
  for (unsigned step = 0; step < count; ++step) {
    unsigned slot = (start + step) % count;
    if (runnable[slot]) return int(slot);
  }
  return none;
}

bool others_runnable(const bool* runnable, unsigned count, int current) {
  for (unsigned slot = 0; slot < count; ++slot)
    if (runnable[slot] && int(slot) != current) return true;
  return false;
}
}  // namespace run_queue
