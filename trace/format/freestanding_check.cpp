// Compiled with -ffreestanding and no C++ library, to prove the format headers can go into the
// hypervisor as they are. Never linked into anything.
#include <stdint.h>

#include "trace/format/event_mask.h"
#include "trace/format/events.h"
#include "trace/format/framing.h"
#include "trace/format/record_view.h"
#include "trace/format/ring.h"

extern "C" bool trace_freestanding_check(t_buf* header, void* data, uint32_t bytes, uint64_t tsc) {
  trace::TraceRing ring(header, data, bytes);
  uint32_t extra[3] = {1, 2, 3};
  bool written = ring.write(trace::make_record(trace::events::kPtwrUnhook, tsc, extra, 3), {0, 0});
  trace::RecordFields out;
  return written && ring.pop(out) && trace::RecordView(extra).event() != 0 &&
         trace::event_mask_admits(TRC_ALL, out.event);
}
