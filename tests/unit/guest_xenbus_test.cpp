// The guest's xenbus client (guest/xenbus/xenbus_protocol), alone and against the host's store through a
// shared ring page: the same bytes a domU and pvhv-xenstored exchange.
#include <gtest/gtest.h>
#include <string.h>

#include <random>
#include <string>

#include <xen/sched.h>

#include "guest/xenbus/xenbus_protocol.h"
#include "tools/xenstore/xenstore.h"

namespace {

using lib::ShutdownAction;
using lib::ShutdownWatcher;

TEST(guest_xenbus, BuildsRequestsAsTheStoreParsesThem) {
  uint8_t buffer[64];
  const char* args[] = {"control/shutdown", ""};
  size_t n = lib::xenbus_build(buffer, sizeof buffer, XS_WRITE, 9, args, 2, true);
  ASSERT_EQ(n, 16u + 17u);
  xenstore::MessageParser parser;
  parser.push(std::string_view(reinterpret_cast<char*>(buffer), n));
  auto m = parser.next();
  ASSERT_TRUE(m);
  EXPECT_EQ(*m, xenstore::make_request(XS_WRITE, {"control/shutdown", ""}, 0, 9, true));
  // Too small a buffer, or beyond the payload limit: nothing.
  EXPECT_EQ(lib::xenbus_build(buffer, 20, XS_WRITE, 9, args, 2, true), 0u);
  std::string huge(XENSTORE_PAYLOAD_MAX, 'x');
  const char* big[] = {huge.c_str()};
  static uint8_t large[XENSTORE_PAYLOAD_MAX * 2];
  EXPECT_EQ(lib::xenbus_build(large, sizeof large, XS_READ, 1, big, 1, false), 0u);
}

TEST(guest_xenbus, RingIndicesFromALyingServerMoveNothing) {
  xenstore_domain_interface page{};
  uint8_t data[8] = {1, 2, 3, 4, 5, 6, 7, 8};
  page.req_cons = 0x80000000;  // the server says it consumed what was never produced
  EXPECT_EQ(lib::xenbus_ring_write(&page, data, sizeof data), 0u);
  page.req_cons = 0;
  page.rsp_prod = XENSTORE_RING_SIZE + 1;
  uint8_t out[8];
  EXPECT_EQ(lib::xenbus_ring_read(&page, out, sizeof out), 0u);
  EXPECT_EQ(page.rsp_cons, 0u);
}

TEST(guest_xenbus, RingWrapsAndStopsWhenFull) {
  xenstore_domain_interface page{};
  page.req_cons = page.req_prod = XENSTORE_RING_SIZE - 3;
  uint8_t data[XENSTORE_RING_SIZE + 10];
  for (size_t i = 0; i < sizeof data; ++i) data[i] = static_cast<uint8_t>(i);
  EXPECT_EQ(lib::xenbus_ring_write(&page, data, sizeof data), static_cast<size_t>(XENSTORE_RING_SIZE));
  EXPECT_EQ(static_cast<uint8_t>(page.req[0]), 3);
  EXPECT_EQ(lib::xenbus_ring_write(&page, data, 1), 0u);
}

TEST(guest_xenbus, ReaderReassemblesAndRefusesOversized) {
  std::string stream = xenstore::serialize(xenstore::Message{XS_READ, 1, 0, "poweroff"}) +
                       xenstore::serialize(xenstore::Message{XS_WATCH_EVENT, 0, 0, std::string("a\0t\0", 4)});
  lib::XenbusReader reader;
  xsd_sockmsg h;
  const char* payload;
  for (char c : stream) {
    uint8_t b = static_cast<uint8_t>(c);
    EXPECT_EQ(reader.push(&b, 1), 1u);
    if (reader.next(h, payload)) {
      if (h.type == XS_READ) {
        EXPECT_STREQ(payload, "poweroff");
      } else {
        EXPECT_EQ(h.type, static_cast<uint32_t>(XS_WATCH_EVENT));
      }
    }
  }
  xsd_sockmsg bad{XS_READ, 1, 0, XENSTORE_PAYLOAD_MAX + 1};
  lib::XenbusReader r2;
  r2.push(reinterpret_cast<uint8_t*>(&bad), sizeof bad);
  EXPECT_FALSE(r2.next(h, payload));
  EXPECT_TRUE(r2.broken());
}

TEST(guest_xenbus, ShutdownRequestsAsLinuxReadsThem) {
  EXPECT_EQ(lib::parse_shutdown_request("poweroff", 8), ShutdownAction::poweroff);
  EXPECT_EQ(lib::parse_shutdown_request("halt", 4), ShutdownAction::poweroff);
  EXPECT_EQ(lib::parse_shutdown_request("reboot", 6), ShutdownAction::reboot);
  EXPECT_EQ(lib::parse_shutdown_request("suspend", 7), ShutdownAction::none);
  EXPECT_EQ(lib::parse_shutdown_request("poweroffx", 9), ShutdownAction::none);
  EXPECT_EQ(lib::parse_shutdown_request("", 0), ShutdownAction::none);
  EXPECT_EQ(lib::shutdown_reason(ShutdownAction::reboot), static_cast<unsigned>(SHUTDOWN_reboot));
  EXPECT_EQ(lib::shutdown_reason(ShutdownAction::poweroff), static_cast<unsigned>(SHUTDOWN_poweroff));
}

// A domU and the host's store on one ring page: the guest's watcher registers, the toolstack
// writes control/shutdown, the guest reads it, clears it, and only then acts.
struct Pair {
  xenstore::Store store;
  std::unique_ptr<xenstore::RingConnection> server;
  xenstore_domain_interface page{};
  lib::XenbusReader reader;
  ShutdownWatcher watcher;
  ShutdownWatcher::Output out;

  Pair() {
    xenstore::create_domain_nodes(store, {5, "guest"});
    server = std::make_unique<xenstore::RingConnection>(store, 5);
  }
  void guest_flush() {
    size_t n = lib::xenbus_ring_write(&page, out.bytes, out.length);
    memmove(out.bytes, out.bytes + n, out.length - n);
    out.length -= n;
  }
  void guest_event() {
    uint8_t chunk[256];
    for (;;) {
      size_t n = lib::xenbus_ring_read(&page, chunk, std::min(sizeof chunk, reader.room()));
      reader.push(chunk, n);
      xsd_sockmsg h;
      const char* payload;
      bool any = false;
      while (reader.next(h, payload)) any = true, watcher.on_message(h, payload, out);
      if (!n && !any) break;
    }
    guest_flush();
  }
  void run(int rounds) {
    for (int i = 0; i < rounds && watcher.action() == ShutdownAction::none; ++i) {
      server->serve(page);
      guest_event();
    }
  }
};

TEST(guest_xenbus, ObeysControlShutdownThroughTheStore) {
  for (auto [request, expected] :
       {std::pair{"poweroff", ShutdownAction::poweroff}, std::pair{"reboot", ShutdownAction::reboot},
        std::pair{"halt", ShutdownAction::poweroff}}) {
    Pair p;
    p.watcher.start(p.out);
    p.guest_flush();
    p.run(5);
    EXPECT_EQ(p.watcher.action(), ShutdownAction::none);  // the registration event, node empty
    EXPECT_EQ(p.store.read("/local/domain/5/control/feature-poweroff"), "1");
    EXPECT_EQ(p.store.read("/local/domain/5/control/feature-reboot"), "1");
    p.store.write("/local/domain/5/control/shutdown", request);
    p.run(10);
    EXPECT_EQ(p.watcher.action(), expected) << request;
    EXPECT_EQ(p.store.read("/local/domain/5/control/shutdown"), "") << "cleared before acting";
  }
}

TEST(guest_xenbus, IgnoresUnknownRequestsAndForeignTokens) {
  Pair p;
  p.watcher.start(p.out);
  p.guest_flush();
  p.run(5);
  p.store.write("/local/domain/5/control/shutdown", "suspend");
  p.run(10);
  EXPECT_EQ(p.watcher.action(), ShutdownAction::none);
  // An event with another token, or a READ answer nobody asked for, does nothing.
  ShutdownWatcher w;
  ShutdownWatcher::Output out;
  xsd_sockmsg h{XS_WATCH_EVENT, 0, 0, 8};
  w.on_message(h, "a\0other\0", out);
  EXPECT_EQ(out.length, 0u);
  xsd_sockmsg r{XS_READ, 42, 0, 8};
  w.on_message(r, "poweroff", out);
  EXPECT_EQ(w.action(), ShutdownAction::none);
}

TEST(guest_xenbus, RandomServerBytesNeverConfuseTheWatcher) {
  std::mt19937 rng(3);
  for (int round = 0; round < 10000; ++round) {
    lib::XenbusReader reader;
    ShutdownWatcher w;
    ShutdownWatcher::Output out;
    w.start(out);
    uint8_t bytes[300];
    for (auto& b : bytes) b = static_cast<uint8_t>(rng());
    reader.push(bytes, rng() % sizeof bytes);
    xsd_sockmsg h;
    const char* payload;
    while (reader.next(h, payload)) {
      out.length = 0;
      w.on_message(h, payload, out);
      EXPECT_LE(out.length, sizeof out.bytes);
    }
    // Random bytes cannot ask for a shutdown: that takes a READ answer to our own request id
    // followed by the ack of our own clearing write.
    EXPECT_EQ(w.action(), ShutdownAction::none);
  }
}

}  // namespace
