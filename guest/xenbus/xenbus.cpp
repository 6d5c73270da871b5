#include "xenbus/xenbus.h"

#include "arch/xen.h"
#include "kernel/boot/boot_info.h"
#include "kernel/console/console.h"
#include "arch/event_channel_ops.h"
#include "kernel/events/events.h"
#include "kernel/memory/physical_memory.h"
#include "kernel/events/time.h"
#include "kernel/events/timer.h"
#include "lib/cmdline.h"
#include "xenbus/xenbus_protocol.h"

namespace kernel {
namespace {

volatile xenstore_domain_interface* ring;
uint32_t ring_port;
lib::XenbusReader reader;
lib::ShutdownWatcher watcher;
lib::ShutdownWatcher::Output pending;  // requests not yet in the ring (it was full)
uint64_t received;

void notify() { evtchn::send(ring_port); }

// Puts what is pending into the ring; the rest waits for the server to make room.
void flush() {
  if (pending.length == 0) return;
  size_t n = lib::xenbus_ring_write(ring, pending.bytes, pending.length);
  for (size_t i = n; i < pending.length; ++i) pending.bytes[i - n] = pending.bytes[i];
  pending.length -= n;
  if (n) notify();
}

void on_store_event(uint32_t) {
  bool consumed = false;
  uint8_t chunk[256];
  for (;;) {
    size_t want = reader.room() < sizeof chunk ? reader.room() : sizeof chunk;
    size_t n = want ? lib::xenbus_ring_read(ring, chunk, want) : 0;
    if (n) consumed = true;
    reader.push(chunk, n);
    xsd_sockmsg header;
    const char* payload;
    bool any = false;
    while (reader.next(header, payload)) {
      any = true;
      ++received;
      watcher.on_message(header, payload, pending);
    }
    if (n == 0 && !any) break;
  }
  if (reader.broken()) {
    print("xenbus: the store sent a message longer than %u bytes; no longer listening\n", XENSTORE_PAYLOAD_MAX);
    events_detach(ring_port);
    return;
  }
  if (consumed) notify();  // room for the server's next answers
  flush();
  if (watcher.action() != lib::ShutdownAction::none) {
    unsigned reason = lib::shutdown_reason(watcher.action());
    print("xenbus: control/shutdown asks for %s\n", reason == SHUTDOWN_reboot ? "reboot" : "poweroff");
    xen::shutdown(reason);
  }
}

}  // namespace

void xenbus_init() {
  const start_info_t* si = boot_info.start_info;
  if ((si->flags & SIF_INITDOMAIN) || si->store_mfn == 0 || si->store_evtchn == 0) return;
  Pfn pfn = mfn_to_pfn(Mfn{si->store_mfn});
  if (pfn.value >= boot_info.first_free_pfn.value) {
    print("xenbus: store page %lx is not in the initial mapping; no xenbus\n", si->store_mfn);
    return;
  }
  ring = reinterpret_cast<volatile xenstore_domain_interface*>(pfn_to_va(pfn));
  ring_port = si->store_evtchn;
  if (xenbus_hostile_requested()) {
    print("xenbus: store on port %u, left to the hostile client\n", ring_port);
    return;  // xenbus_wait_if_requested hands the ring over
  }
  char value[8];
  if (lib::cmdline_value(boot_info.cmdline, "xenbus", value, sizeof value) && lib::string_equal(value, "off")) {
    print("xenbus: store on port %u, left as its builder made it (xenbus=off)\n", ring_port);
    return;
  }
  if (!events_attach(ring_port, on_store_event)) {
    print("xenbus: port %u is beyond the event table; no xenbus\n", ring_port);
    ring = nullptr;
    return;
  }
  watcher.start(pending);
  flush();
  print("xenbus: store on port %u, watching control/shutdown\n", ring_port);
}

void xenbus_wait_if_requested() {
  char value[8];
  if (xenbus_hostile_requested()) xenbus_hostile_run(ring, ring_port);
  if (!lib::cmdline_value(boot_info.cmdline, "xenbus", value, sizeof value) || value[0] != 'w') return;
  print("xenbus: waiting for control/shutdown (%s)\n", ring ? "store connected" : "no store");
  for (;;) sleep_until(system_time_ns() + 1'000'000'000);  // events are delivered while blocked
}

uint64_t xenbus_messages_received() { return received; }
volatile xenstore_domain_interface* xenbus_store_page() { return ring; }
uint32_t xenbus_store_port() { return ring ? ring_port : 0; }

}  // namespace kernel
