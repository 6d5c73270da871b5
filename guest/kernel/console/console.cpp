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

// A full ring is waited for this long: the backend may drain it on its own schedule (pvhvd,
// an xl domU's backend, every 500 ms; the hypervisor, a boot domU's, at each notification).
constexpr uint64_t kBackendPatienceNs = 2'000'000'000;
// A backend that left the ring full that long is taken for gone until it consumes again
// (out_cons moves): meanwhile text goes through console_io at once.
bool backend_stalled;
XENCONS_RING_IDX stalled_cons;
// The clock (console_set_clock): null until the kernel's time runs.
uint64_t (*clock_ns)();

// The bytes the ring has room for (0 for indexes we do not understand).
size_t ring_room() {
  volatile xencons_interface* shared = ring;
  XENCONS_RING_IDX used = shared->out_prod - shared->out_cons;
  return used > sizeof(ring->out) ? 0 : sizeof(ring->out) - used;
}

// Puts as much of the text in the ring as fits; the count put. Never inlined: its name marks a
// domU's console write for bench/run_toolstack_bench.py (`xl create` -> first console write).
[[gnu::noinline]] size_t ring_put(const char* text, size_t length) {
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

// True once the notified backend made room, yielding the CPU meanwhile as Linux's hvc_xen
// does (dom0 runs its backend); false when it leaves the ring full for kBackendPatienceNs, or
// before the clock runs (early boot).
bool wait_for_room() {
  if (ring_room()) return true;
  if (clock_ns == nullptr) return false;
  if (backend_stalled && ring->out_cons == stalled_cons) return false;
  backend_stalled = false;
  const uint64_t until = clock_ns() + kBackendPatienceNs;
  while (clock_ns() < until) {
    xen::sched_op(SCHEDOP_yield, nullptr);
    if (ring_room()) return true;
  }
  backend_stalled = true;
  stalled_cons = ring->out_cons;
  return false;
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
    if (length && n == 0 && !wait_for_room()) break;
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

void console_set_clock(uint64_t (*now_ns)()) { clock_ns = now_ns; }

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
