#include "tools/daemon/trace_window.h"

#include <cstring>

#include "trace/format/events.h"
#include "trace/format/record_header.h"

namespace pvhv::daemon {

void count_trace_window(const uint8_t* bytes, size_t size, TraceCounts& counts) {
  size_t offset = 0;
  while (size - offset >= 4) {
    uint32_t word;
    std::memcpy(&word, bytes + offset, 4);
    const trace::RecordHeader header(word);
    if (header.size_bytes() > size - offset) break;
    if (header.event() == trace::events::kLostRecords && header.extra_words() >= 1) {
      uint32_t lost;
      std::memcpy(&lost, bytes + offset + 4 + (header.has_tsc() ? 8 : 0), 4);
      counts.lost += lost;
    }
    if (header.event() != trace::events::kWrapBuffer) ++counts.records;
    offset += header.size_bytes();
  }
}

}  // namespace pvhv::daemon
