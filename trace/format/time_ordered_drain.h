// Copying several CPUs' rings out in time order, for a reader that writes one stream of
// per-CPU windows (dom0's capture): the CPU whose next record is oldest gives its records up
// to the next record of any other CPU, then the choice is made again. Xen's xenalyze merges
// the CPUs as it reads the file and takes a CPU into account from its first window on, so one
// CPU's backlog of seconds written before another CPU's first window would put the second
// CPU's records in its past ("possible tsc skew", then a fatal inconsistency). Freestanding.
#pragma once
#include "trace/format/ring.h"

namespace trace {

// `rings[cpu]` (null: no buffer), `count` of them; `send(cpu, bytes, size)` gets each window
// (at most `capacity` bytes of whole records, copied into `chunk`). Returns the bytes sent.
// Records no stamped record follows (wrap padding at a ring's end) stay for the next drain.
template <typename Send>
uint32_t drain_in_time_order(TraceRing* const* rings, unsigned count, uint8_t* chunk, uint32_t capacity, Send send) {
  uint32_t total = 0;
  for (;;) {
    unsigned oldest = count;
    uint64_t oldest_tsc = ~uint64_t(0), next_other = ~uint64_t(0);
    for (unsigned cpu = 0; cpu < count; ++cpu) {
      uint64_t tsc;
      if (!rings[cpu] || !rings[cpu]->next_tsc(tsc)) continue;
      if (oldest == count || tsc < oldest_tsc) {
        if (oldest != count) next_other = oldest_tsc;
        oldest_tsc = tsc;
        oldest = cpu;
      } else if (tsc < next_other) {
        next_other = tsc;
      }
    }
    if (oldest == count) return total;
    const uint32_t bytes = rings[oldest]->copy_out(chunk, capacity, next_other);
    if (bytes == 0) return total;  // an inconsistent ring: left as it is
    send(oldest, chunk, bytes);
    total += bytes;
  }
}

}  // namespace trace
