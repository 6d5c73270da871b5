#include "kernel/console/console.h"

#include <stdarg.h>

#include <xen/io/console.h>

#include "arch/xen.h"
#include "common/format.h"
#include "kernel/boot/boot_info.h"
#include "arch/event_channel_ops.h"
#include "kernel/boot/frames.h"

namespace kernel {
namespace {

xencons_interface* ring;  // null: console_io
uint32_t ring_port;

void console_io_write(const char* text, size_t length) {
  // Xen may write less than asked for (it returns the count written) for large buffers.
  while (length > 0) {
    long written = xen::console_write(text, length);
    if (written <= 0) return;
    text += written;
    length -= static_cast<size_t>(written);
  }
}

// False when the backend cannot be told (the port is gone): the console falls back.
bool notify() { return evtchn::send(ring_port) == 0; }

// Puts as much of the text in the ring as fits; the count put.
size_t ring_put(const char* text, size_t length) {
  volatile xencons_interface* shared = ring;
  XENCONS_RING_IDX consumer = shared->out_cons, producer = shared->out_prod;
  __atomic_thread_fence(__ATOMIC_ACQUIRE);
  XENCONS_RING_IDX used = producer - consumer;
  if (used > sizeof(ring->out)) return 0;  // indexes we do not understand: nothing fits
  size_t space = sizeof(ring->out) - used, n = length < space ? length : space;
  for (size_t i = 0; i < n; ++i) shared->out[MASK_XENCONS_IDX(producer + i, ring->out)] = text[i];
  __atomic_thread_fence(__ATOMIC_RELEASE);  // the bytes before the index that publishes them
  shared->out_prod = producer + XENCONS_RING_IDX(n);
  return n;
}

// The backend drains on notification; if the ring stays full (or the port is gone), the rest
// goes through console_io so that nothing is lost.
void ring_write(const char* text, size_t length) {
  while (length > 0) {
    size_t n = ring_put(text, length);
    text += n;
    length -= n;
    if (!notify()) {
      ring = nullptr;
      break;
    }
    if (n == 0 && ring_put(text, length) == 0) break;
  }
  if (length) console_io_write(text, length);
}

}  // namespace

void console_init() {
  const start_info_t* si = boot_info.start_info;
  if ((si->flags & SIF_INITDOMAIN) || si->console.domU.mfn == 0) return;
  Mfn mfn{si->console.domU.mfn};
  Pfn pfn = mfn_to_pfn(mfn);
  if (pfn.value >= boot_info.first_free_pfn.value) return;  // not in the initial mapping: ignore it
  ring = reinterpret_cast<xencons_interface*>(pfn_to_va(pfn));
  ring_port = si->console.domU.evtchn;
}

void console_write(const char* text, size_t length) {
  if (ring)
    ring_write(text, length);
  else
    console_io_write(text, length);
}

void print(const char* fmt, ...) {
  char buffer[512];
  va_list args;
  va_start(args, fmt);
  size_t length = format_to(buffer, sizeof(buffer), fmt, args);
  va_end(args);
  if (length >= sizeof(buffer)) length = sizeof(buffer) - 1;
  console_write(buffer, length);
}

xencons_interface* console_ring() { return ring; }
uint32_t console_port() { return ring ? ring_port : 0; }

}  // namespace kernel
