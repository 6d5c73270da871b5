#include "relay/relay.h"

#include "arch/hypercall.h"
#include "arch/xen.h"
#include "kernel/boot/boot_info.h"
#include "kernel/console/console.h"
#include "kernel/memory/direct_map.h"
#include "kernel/events/events.h"
#include "kernel/memory/page_allocator.h"
#include "kernel/console/panic.h"
#include "kernel/memory/physical_memory.h"
#include "relay/link/relay_window.h"
#include "relay/link/serial_link.h"
#include "pv-kernel-patches/shared_info.h"
#include "kernel/events/time.h"
#include "kernel/events/timer.h"
#include "kernel/measurement/trace_capture.h"
#include "lib/cmdline.h"
#include "relay/server/relay_server.h"
#include "common/relay/frame_receiver.h"
#include "common/placement_new.h"

namespace kernel::relay {
namespace {
namespace proto = ::relay;
using lib::relay::BufferTable;

using lib::relay::MappingTable;

// The buffer window; after a guard page, the scratch page foreign frames are mapped at for one
// copy; after another, the pages of the lasting mappings (FOREIGN_MAP), one per slot: inside the
// kernel's 1 GiB, above the direct map and the trace buffers' window (0xffffffffb0000000), below
// the bulk window (0xffffffffb4600000).
constexpr uint64_t kWindowBase = 0xffffffffb4000000ull;
constexpr uint64_t kWindowEnd = kWindowBase + BufferTable::kWindowPages * BufferTable::kPageBytes;
constexpr uint64_t kScratch = kWindowEnd + BufferTable::kPageBytes;
constexpr uint64_t kMappings = kScratch + 2 * BufferTable::kPageBytes;
constexpr uint64_t kMappingsEnd = kMappings + MappingTable::kMaxMappings * BufferTable::kPageBytes;
static_assert(kMappingsEnd <= 0xffffffffb4600000ull, "the lasting mappings reach the bulk window");
constexpr uint64_t kDataFlags =
    PageTableEntry::kPresent | PageTableEntry::kWritable | PageTableEntry::kAccessed | PageTableEntry::kDirty;

// A frame that stops arriving for this long is truncated. Generous: the host may be busy.
constexpr uint64_t kStallNs = 500'000'000;
// After the last byte or answer, poll the UART this long before sleeping: a client sends its
// next request right after reading an answer.
constexpr uint64_t kBusyPollNs = 2'000'000;
constexpr uint64_t kIdleSleepNs = 1'000'000;
constexpr uint64_t kEmptyUartPauseNs = 50'000;

uint64_t window_pfn[BufferTable::kWindowPages];
// dom0's virtual time inside request handling this session (from a whole frame to its answer
// sent: the relay's checks, the hypercalls and the hypervisor's work, the copies), not the
// link's transfer: under -icount, what `make bench` reports as the cost of a host-built domU.
uint64_t session_serving_ns, session_frames;
uint64_t pending_events;  // ports < 64 the host bound, with an event not pushed yet
constexpr uint32_t kMaxPort = 64;

void on_host_event(uint32_t port) {
  // As Linux's evtchn driver: the port stays masked until the host unmasks it, so a busy
  // port cannot flood the link.
  events_mask(port);
  pending_events |= 1ull << port;
}

class KernelBackend final : public lib::relay::Backend {
 public:
  long hypercall(uint32_t number, const uint64_t (&a)[5]) override {
    return arch::hypercall(number, a[0], a[1], a[2], a[3], a[4]);
  }

  uint8_t* map_buffer(uint64_t address, uint32_t pages) override {
    uint64_t first = (address - kWindowBase) / BufferTable::kPageBytes;
    for (uint32_t i = 0; i < pages; ++i) {
      Pfn pfn;
      if (!page_allocator.allocate(pfn)) {
        unmap_buffer(address, i);
        return nullptr;
      }
      __builtin_memset(pfn_pointer<void>(pfn), 0, lib::kPageSize);
      long rc = pv::ops.set_kernel_mapping(address + i * BufferTable::kPageBytes,
                                           PageTableEntry::make(pfn_to_mfn(pfn), kDataFlags));
      if (rc < 0) panic("relay: mapping buffer page %lx: %ld", address + i * BufferTable::kPageBytes, rc);
      window_pfn[first + i] = pfn.value;
    }
    return reinterpret_cast<uint8_t*>(address);
  }

  void unmap_buffer(uint64_t address, uint32_t pages) override {
    uint64_t first = (address - kWindowBase) / BufferTable::kPageBytes;
    for (uint32_t i = 0; i < pages; ++i) {
      long rc = pv::ops.set_kernel_mapping(address + i * BufferTable::kPageBytes, PageTableEntry{});
      if (rc < 0) panic("relay: unmapping buffer page %lx: %ld", address + i * BufferTable::kPageBytes, rc);
      page_allocator.free(Pfn{window_pfn[first + i]});
    }
  }

  long foreign_copy(uint16_t domid, uint64_t frame, uint32_t offset, uint8_t* data, uint32_t length,
                    bool write) override {
    uint64_t flags = PageTableEntry::kPresent | PageTableEntry::kAccessed;
    if (write) flags |= PageTableEntry::kWritable | PageTableEntry::kDirty;
    pv::PageTableSlot slot = table_slot(kernel_l1_for(kScratch), lib::table_index(kScratch, Level::l1), Level::l1);
    long rc = pv::ops.map_foreign(slot, PageTableEntry::make(Mfn{frame}, flags), domid);
    if (rc < 0) return rc;
    // The map and unmap are hypercalls (asm with a memory clobber): the copy stays between them.
    auto* page = reinterpret_cast<uint8_t*>(kScratch) + offset;
    if (write)
      __builtin_memcpy(page, data, length);
    else
      __builtin_memcpy(data, page, length);
    // Unmapped with an invalidation, so the next map_foreign finds the slot empty and untranslated.
    rc = pv::ops.set_kernel_mapping(kScratch, PageTableEntry{});
    if (rc < 0) panic("relay: unmapping the scratch page: %ld", rc);
    return 0;
  }

  long map_foreign(uint32_t slot, uint16_t domid, uint64_t frame) override {
    uint64_t va = mapping_va(slot);
    pv::PageTableSlot entry = table_slot(kernel_l1_for(va), lib::table_index(va, Level::l1), Level::l1);
    return pv::ops.map_foreign(entry, PageTableEntry::make(Mfn{frame}, kDataFlags), domid);
  }

  void unmap_foreign(uint32_t slot) override {
    // With an invalidation: the next mapping at the slot finds it empty and untranslated. Clearing
    // the entry drops the mapping's references, which may free a dead domain's last frame.
    long rc = pv::ops.set_kernel_mapping(mapping_va(slot), PageTableEntry{});
    if (rc < 0) panic("relay: unmapping lasting mapping %u: %ld", slot, rc);
  }

  uint8_t* mapped_page(uint32_t slot) override { return reinterpret_cast<uint8_t*>(mapping_va(slot)); }

  long bind_virq(uint32_t virq, uint32_t& port) override {
    evtchn_bind_virq_t bind{};
    bind.virq = virq;
    bind.vcpu = 0;
    long rc = xen::event_channel_op(EVTCHNOP_bind_virq, &bind);
    if (rc < 0) return rc;
    return attach(bind.port, port);
  }

  long bind_interdomain(uint16_t remote_domain, uint32_t remote_port, uint32_t& port) override {
    evtchn_bind_interdomain_t bind{};
    bind.remote_dom = remote_domain;
    bind.remote_port = remote_port;
    long rc = xen::event_channel_op(EVTCHNOP_bind_interdomain, &bind);
    if (rc < 0) return rc;
    return attach(bind.local_port, port);
  }

  long notify(uint32_t port) override {
    evtchn_send_t send{};
    send.port = port;
    return xen::event_channel_op(EVTCHNOP_send, &send);
  }

  long unmask(uint32_t port) override { return events_unmask(port); }

  long close(uint32_t port) override {
    events_detach(port);
    if (port < kMaxPort) pending_events &= ~(1ull << port);
    evtchn_close_t close{};
    close.port = port;
    return xen::event_channel_op(EVTCHNOP_close, &close);
  }

  void session_opened() override {
    print("relay: session opened (the one before: %lu frames served in %lu us)\n", session_frames,
          session_serving_ns / 1000);
    session_frames = session_serving_ns = 0;
    trace_capture::restart_stream();
  }

  void shutdown(uint32_t reason) override;

 private:
  static uint64_t mapping_va(uint32_t slot) { return kMappings + uint64_t(slot) * BufferTable::kPageBytes; }

  // A new port of dom0 for the host: handled by on_host_event, or closed again if the handler
  // table cannot reach it.
  long attach(uint32_t local, uint32_t& port) {
    if (local >= kMaxPort || !events_attach(local, on_host_event)) {
      evtchn_close_t close{};
      close.port = local;
      xen::event_channel_op(EVTCHNOP_close, &close);
      return -XEN_ENOSPC;
    }
    port = local;
    return 0;
  }
};

class SerialSink final : public lib::relay::Sink {
 public:
  void send(uint8_t type, uint16_t channel, const uint8_t* payload, uint32_t length) override {
    serial_link::send_frame(type, channel, payload, length);
    if (type == proto::error) report_error(payload, length);
  }

 private:
  // Errors are rare and worth seeing on the console (the hostile-input test reads them).
  static void report_error(const uint8_t* payload, uint32_t length) {
    proto::Reader r(payload, length);
    uint32_t seq = r.u32(), code = r.u32(), type = r.u32();
    int64_t detail = int64_t(r.u64());
    print("relay: error %u for frame type 0x%x seq %u (detail %ld); serving on\n", code, type, seq, detail);
  }
};

constinit KernelBackend backend;
constinit SerialSink sink;
alignas(lib::relay::Server) uint8_t server_storage[sizeof(lib::relay::Server)];
lib::relay::Server* server;
uint8_t receive_storage[proto::frame::kHeaderBytes + proto::kMaxRequestPayload];
uint8_t window_storage[proto::frame::kHeaderBytes + proto::kMaxRequestPayload];
uint64_t next_serial_poll;

void KernelBackend::shutdown(uint32_t reason) {
  const lib::relay::ServerStats& s = server->stats();
  print(
      "relay: shutdown requested (reason %u): %lu requests, %lu errors, %lu events pushed; this session %lu frames "
      "served in %lu us\n",
      reason, s.requests, s.errors, s.events, session_frames, session_serving_ns / 1000);
  trace_capture::finish();
  xen::shutdown(reason);
}

bool prepare_window() {
  uint64_t direct_map_end = pfn_to_va(Pfn{page_allocator.end()});
  if (direct_map_end > kWindowBase) {
    print("relay: dom0's memory reaches the buffer window at %lx: relay off\n", kWindowBase);
    return false;
  }
  // The window's L1 tables exist before any buffer is mapped (update_va_mapping needs them).
  for (uint64_t va = kWindowBase; va < kMappingsEnd; va += 512 * BufferTable::kPageBytes) kernel_l1_for(va);
  kernel_l1_for(kScratch);
  kernel_l1_for(kMappingsEnd - 1);
  pv::ops.flush();
  return true;
}

void push_events() {
  while (pending_events) {
    uint32_t port = uint32_t(__builtin_ctzll(pending_events));
    pending_events &= pending_events - 1;
    server->handle_event(port);
  }
}

// Hands out every frame or error `receiver` holds, answering on `path`. Returns whether any came.
bool serve_received(proto::FrameReceiver& receiver, serial_link::Path path, uint64_t now) {
  bool any = false;
  for (proto::Received r = receiver.next(now); r.kind != proto::Received::Kind::nothing; r = receiver.next(now)) {
    any = true;
    serial_link::set_path(path);  // dom0 answers (and sends on) the path the last request came by
    if (r.kind == proto::Received::Kind::frame) {
      uint64_t start = system_time_ns();
      server->handle_frame(r.type, r.channel, r.payload, r.length);
      session_serving_ns += system_time_ns() - start;
      ++session_frames;
    } else {
      server->handle_receive_error(r.error, r.type, r.channel, r.detail);
    }
  }
  return any;
}

// Reads the UART. Each port access takes QEMU's big lock, which its main loop needs to refill
// the 16550's FIFO from the socket (at most 14 bytes a turn): polling an empty FIFO back to back
// competes with it for the lock. A pause after an empty read leaves it the lock (one quiet-host
// measurement: 14 KB/s host to dom0 without, 43 KB/s with; on a loaded host both are 10-15).
// Sessions over the bulk window do not depend on it.
size_t poll_serial(proto::FrameReceiver& receiver, uint64_t now) {
  if (now < next_serial_poll) return 0;
  uint8_t chunk[64];
  size_t room = receiver.space() < sizeof(chunk) ? receiver.space() : sizeof(chunk);
  size_t n = serial_link::receive(chunk, room);
  if (n)
    receiver.push(chunk, n, now);
  else
    next_serial_poll = now + kEmptyUartPauseNs;
  return n;
}

size_t poll_window(proto::FrameReceiver& receiver, uint64_t now) {
  uint8_t chunk[4096];
  size_t room = receiver.space() < sizeof(chunk) ? receiver.space() : sizeof(chunk);
  size_t n = relay_window::receive(chunk, room);
  if (n) receiver.push(chunk, n, now);
  return n;
}

// One pass: what the UART and the window hold, every frame or error that makes, the events
// that came. Returns whether anything happened.
bool serve_once(proto::FrameReceiver& serial_receiver, proto::FrameReceiver& window_receiver) {
  uint64_t now = system_time_ns();
  bool active = poll_serial(serial_receiver, now) > 0;
  active |= poll_window(window_receiver, now) > 0;
  now = system_time_ns();
  active |= serve_received(serial_receiver, serial_link::Path::serial, now);
  active |= serve_received(window_receiver, serial_link::Path::window, now);
  // Events are masked while the kernel runs; take what is pending without waiting for a block.
  if (vcpu()->evtchn_upcall_pending) events_handle_upcall();
  if (pending_events) {
    push_events();
    active = true;
  }
  trace_capture::poll();
  return active;
}
}  // namespace

void run_if_requested() {
  char link[16];
  if (!lib::cmdline_value(boot_info.cmdline, "relay", link, sizeof(link))) return;
  if (!lib::string_equal(link, "com2")) {
    print("relay: unknown link '%s' (relay=com2): relay off\n", link);
    return;
  }
  long rc = serial_link::open();
  if (rc < 0) {
    print("relay: no I/O permission (%ld): relay off\n", rc);
    return;
  }
  if (!prepare_window()) return;
  uint32_t flags = trace_capture::capturing ? proto::kFlagTraceOnLink : 0;
  if (relay_window::open()) flags |= proto::kFlagWindow;
  server = new (server_storage) lib::relay::Server(backend, sink, kWindowBase, flags);
  proto::FrameReceiver serial_receiver(receive_storage, sizeof(receive_storage), proto::kMaxRequestPayload, kStallNs);
  proto::FrameReceiver window_receiver(window_storage, sizeof(window_storage), proto::kMaxRequestPayload, kStallNs);
  print("relay: serving tools/PROTOCOL.md v%u on COM2%s; buffers at %lx\n", proto::kProtocolVersion,
        trace_capture::capturing ? " beside the trace stream" : "", kWindowBase);
  uint64_t last_active = system_time_ns();
  for (;;) {
    if (serve_once(serial_receiver, window_receiver)) last_active = system_time_ns();
    uint64_t now = system_time_ns();
    // Sleep only between frames and after a quiet spell; a frame under way is polled for.
    if (!serial_receiver.holding() && !window_receiver.holding() && now - last_active > kBusyPollNs) {
      trace_capture::drain_when_idle();
      sleep_until(now + kIdleSleepNs);
    }
  }
}

}  // namespace kernel::relay
