// Pure: what one window of raw trace-ring bytes holds, for `xl trace stop`'s answer (records,
// lost): whole records (wrap padding left out) and the records the hypervisor could not write,
// as its TRC_LOST_RECORDS markers count them (extra word 0). Unit-tested.
#pragma once
#include <cstddef>
#include <cstdint>

namespace pvhv::daemon {

struct TraceCounts {
  uint64_t records = 0;
  uint64_t lost = 0;
};

// Adds the window's records to `counts`; a trailing part record is not counted.
void count_trace_window(const uint8_t* bytes, size_t size, TraceCounts& counts);

}  // namespace pvhv::daemon
