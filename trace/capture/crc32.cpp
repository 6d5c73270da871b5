#include "trace/capture/crc32.h"

#include "common/stream/stream_frame.h"

namespace trace {

// One CRC-32 for both ends of the stream: the freestanding one the guest's streamer uses.
uint32_t crc32_update(uint32_t crc, const uint8_t* data, size_t size) {
  return stream_frame::crc32_update(crc, data, size);
}

}  // namespace trace
