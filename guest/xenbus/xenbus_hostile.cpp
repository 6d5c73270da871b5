// `xenbus=hostile hostile=<kind>`: a domU that misbehaves on its xenstore ring, so the host's
// store server (pvhvd) can be tested from a real guest: it must answer Xen's errors or stop
// serving this domain, and never stall the other domains. Kinds:
//   flood   - node quota (writes until ENOSPC), transactions opened and never ended (until
//             ENOSPC), requests flooded while no answer is read (the server must stop reading,
//             then answer every one once we read), then one ordinary request still answered;
//   garbage - a header announcing a payload beyond XENSTORE_PAYLOAD_MAX;
//   ringidx - req_prod moved more than a ring's worth past req_cons.
// Each prints what it saw (`xenbus-hostile: ...`) and the domain powers off. The ring is
// polled (no event handler): the kernel's ordinary xenbus client is not started in this mode.
#include "arch/xen.h"
#include "kernel/boot/boot_info.h"
#include "kernel/console/console.h"
#include "arch/event_channel_ops.h"
#include "kernel/memory/physical_memory.h"
#include "kernel/events/time.h"
#include "kernel/events/timer.h"
#include "xenbus/xenbus.h"
#include "lib/cmdline.h"
#include "xenbus/xenbus_protocol.h"

namespace kernel {
namespace {

constexpr uint64_t kMs = 1'000'000;
// How long an answer (or room in the ring) may take: the store is polled through the relay,
// which on a loaded host takes seconds a round; a store that never answers still ends the test.
constexpr uint64_t kPatienceMs = 60'000;

// "data/q/<n>" (no printf-family formatter in the kernel).
void quota_path(char* out, unsigned n) {
  const char prefix[] = "data/q/";
  size_t at = 0;
  for (; prefix[at]; ++at) out[at] = prefix[at];
  char digits[12];
  size_t count = 0;
  do digits[count++] = char('0' + n % 10), n /= 10;
  while (n);
  while (count) out[at++] = digits[--count];
  out[at] = 0;
}

struct Hostile {
  volatile xenstore_domain_interface* ring = nullptr;
  uint32_t port = 0;
  lib::XenbusReader reader;
  uint32_t next_id = 1;
  uint8_t bytes[sizeof(xsd_sockmsg) + XENSTORE_PAYLOAD_MAX];  // the request being sent

  void notify() { evtchn::send(port); }
  void pause_ms(uint64_t ms) { sleep_until(system_time_ns() + ms * kMs); }

  // Writes a whole request, waiting for room (false after kPatienceMs without any).
  bool send(uint32_t type, const char* const* args, size_t count, bool last_raw) {
    size_t length = lib::xenbus_build(bytes, sizeof bytes, type, next_id++, args, count, last_raw);
    if (length == 0) return false;
    size_t at = 0;
    uint64_t until = system_time_ns() + kPatienceMs * kMs;
    while (at < length && system_time_ns() < until) {
      size_t n = lib::xenbus_ring_write(ring, bytes + at, length - at);
      at += n;
      notify();
      if (at < length) pause_ms(2);
    }
    return at == length;
  }
  // Whether the request of that size fits in the ring now.
  bool room_for(size_t bytes) const { return XENSTORE_RING_SIZE - (ring->req_prod - ring->req_cons) >= bytes; }

  // The next answer (watch events skipped), waiting up to `ms`.
  bool receive(xsd_sockmsg& header, const char*& payload, uint64_t ms = kPatienceMs) {
    uint64_t until = system_time_ns() + ms * kMs;
    for (;;) {
      uint8_t chunk[256];
      size_t want = reader.room() < sizeof chunk ? reader.room() : sizeof chunk;
      size_t n = want ? lib::xenbus_ring_read(ring, chunk, want) : 0;
      reader.push(chunk, n);
      if (n) notify();
      while (reader.next(header, payload))
        if (header.type != XS_WATCH_EVENT) return true;
      if (n == 0 && (system_time_ns() >= until || reader.broken() || ring->error)) return false;
      if (n == 0) pause_ms(2);
    }
  }
  bool is_error(const xsd_sockmsg& header, const char* payload, const char* name) {
    if (header.type != XS_ERROR) return false;
    for (size_t i = 0;; ++i) {
      if (payload[i] != name[i]) return false;
      if (!name[i]) return true;
    }
  }
  bool ask(uint32_t type, const char* const* args, size_t count, bool last_raw, xsd_sockmsg& header,
           const char*& payload) {
    return send(type, args, count, last_raw) && receive(header, payload);
  }

  // Writes data/q/<i> until the store refuses (its node quota): pipelined, a ring's worth at once.
  void quota() {
    unsigned sent = 0, answered = 0, written = 0, refused = 0;
    char path[32];
    while (answered < 1100 && refused == 0) {
      while (sent < 1100 && sent - answered < 32 && room_for(64)) {
        quota_path(path, sent);
        const char* args[] = {path, "x"};
        if (!send(XS_WRITE, args, 2, true)) break;
        ++sent;
      }
      xsd_sockmsg header;
      const char* payload;
      if (!receive(header, payload)) break;
      ++answered;
      if (header.type == XS_WRITE)
        ++written;
      else if (is_error(header, payload, "ENOSPC"))
        ++refused;
    }
    while (answered < sent) {  // the requests still in flight
      xsd_sockmsg header;
      const char* payload;
      if (!receive(header, payload)) break;
      ++answered;
      if (is_error(header, payload, "ENOSPC")) ++refused;
    }
    print("xenbus-hostile: quota: %u nodes written, %u refused with ENOSPC\n", written, refused);
    const char* data[] = {"data/q"};
    xsd_sockmsg header;
    const char* payload;
    if (ask(XS_RM, data, 1, false, header, payload) && header.type == XS_RM)
      print("xenbus-hostile: quota: data/q removed again\n");
  }

  void transactions() {
    unsigned opened = 0, refused = 0;
    for (int i = 0; i < 12; ++i) {
      const char* none[] = {""};
      xsd_sockmsg header;
      const char* payload;
      if (!ask(XS_TRANSACTION_START, none, 1, false, header, payload)) break;
      if (header.type == XS_TRANSACTION_START)
        ++opened;
      else if (is_error(header, payload, "ENOSPC"))
        ++refused;
    }
    print("xenbus-hostile: transactions: %u opened and never ended, %u refused with ENOSPC\n", opened, refused);
  }

  // Reads of a 2000-byte node, sent without reading any answer: the server stops reading once
  // its answers pile up; once we read, every request is answered.
  void flood() {
    static char big[2001];
    for (int i = 0; i < 2000; ++i) big[i] = 'b';
    const char* write[] = {"data/big", big};
    xsd_sockmsg header;
    const char* payload;
    if (!ask(XS_WRITE, write, 2, true, header, payload) || header.type != XS_WRITE) {
      print("xenbus-hostile: flood: data/big not written\n");
      return;
    }
    unsigned sent = 0;
    const char* read[] = {"data/big"};
    uint64_t until = system_time_ns() + 1000 * kMs;
    while (system_time_ns() < until) {
      if (room_for(32)) {
        if (!send(XS_READ, read, 1, false)) break;
        ++sent;
      } else {
        pause_ms(10);
      }
    }
    XENSTORE_RING_IDX unread = ring->req_prod - ring->req_cons;
    print("xenbus-hostile: flood: %u reads sent without reading; %u bytes of them still unread by the store\n", sent,
          unread);
    unsigned answered = 0;
    while (answered < sent && receive(header, payload)) ++answered;
    print("xenbus-hostile: flood: %u of %u answered once we read\n", answered, sent);
  }

  void still_served() {
    const char* name[] = {"name"};
    xsd_sockmsg header;
    const char* payload;
    if (ask(XS_READ, name, 1, false, header, payload) && header.type == XS_READ)
      print("xenbus-hostile: still served: name = %s\n", payload);
    else
      print("xenbus-hostile: no longer served\n");
  }

  void expect_cut_off(const char* what) {
    uint64_t until = system_time_ns() + kPatienceMs * kMs;
    while (!ring->error && system_time_ns() < until) pause_ms(10);
    print("xenbus-hostile: %s: the store stopped serving us (ring error %u)\n", what, ring->error);
  }

  void garbage() {
    xsd_sockmsg header{XS_WRITE, next_id++, 0, XENSTORE_PAYLOAD_MAX + 904};
    lib::xenbus_ring_write(ring, reinterpret_cast<const uint8_t*>(&header), sizeof header);
    notify();
    expect_cut_off("garbage");
  }

  void ringidx() {
    ring->req_prod = ring->req_cons + 5 * XENSTORE_RING_SIZE;
    notify();
    expect_cut_off("ringidx");
  }
};

Hostile hostile;  // its reader is 8 KiB: not on the boot stack

}  // namespace

bool xenbus_hostile_requested() {
  char value[8];
  return lib::cmdline_value(boot_info.cmdline, "xenbus", value, sizeof value) && value[0] == 'h';
}

void xenbus_hostile_run(volatile xenstore_domain_interface* ring, uint32_t port) {
  char kind[16] = "flood";
  lib::cmdline_value(boot_info.cmdline, "hostile", kind, sizeof kind);
  if (!ring) {
    print("xenbus-hostile: no store\n");
    xen::shutdown(SHUTDOWN_poweroff);
  }
  hostile.ring = ring;
  hostile.port = port;
  print("xenbus-hostile: %s\n", kind);
  if (kind[0] == 'f') {
    hostile.quota();
    hostile.transactions();
    hostile.flood();
    hostile.still_served();
  } else if (kind[0] == 'g') {
    hostile.garbage();
  } else {
    hostile.ringidx();
  }
  print("xenbus-hostile: done\n");
  xen::shutdown(SHUTDOWN_poweroff);
}

}  // namespace kernel
