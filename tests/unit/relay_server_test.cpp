// The dom0 relay's request handling (guest/relay/server/relay_server.h) against a fake dom0: every
// request is answered once, bad ones with an error frame, and the relay keeps serving.
#define __XEN_TOOLS__ 1
#include <gtest/gtest.h>

#include <cstring>
#include <map>
#include <vector>

#include <xen/xen.h>
#include <xen/sysctl.h>
#include <xen/version.h>
#include <xen/errno.h>

#include "relay/server/relay_server.h"
#include "relay_test_support.h"

namespace {
namespace proto = ::relay;
using lib::relay::Server;
using proto::Error;
using relay_test::fields;
using relay_test::u32;
using relay_test::u64;
constexpr uint64_t kBase = 0xffffffffb4000000ull;

struct Sent {
  uint8_t type;
  uint16_t channel;
  std::vector<uint8_t> payload;
  uint32_t u32_at(size_t offset) const {
    uint32_t v;
    std::memcpy(&v, payload.data() + offset, 4);
    return v;
  }
  uint64_t u64_at(size_t offset) const {
    uint64_t v;
    std::memcpy(&v, payload.data() + offset, 8);
    return v;
  }
  uint32_t seq() const { return u32_at(0); }
  Error error() const { return Error(u32_at(4)); }
  int64_t detail() const { return int64_t(u64_at(12)); }
};

struct FakeDom0 final : lib::relay::Backend, lib::relay::Sink {
  std::vector<Sent> sent;
  std::map<uint64_t, std::vector<uint8_t>> mapped;  // address -> memory
  std::vector<uint32_t> hypercalls, closed;
  uint64_t last_args[5] = {};
  long next_result = 0;
  bool out_of_memory = false;
  long foreign_result = 0;
  std::vector<uint8_t> foreign_frame = std::vector<uint8_t>(4096, 0x5a);
  uint32_t next_port = 5;
  int sessions = 0, shutdowns = -1;

  void send(uint8_t type, uint16_t channel, const uint8_t* payload, uint32_t length) override {
    sent.push_back({type, channel, std::vector<uint8_t>(payload, payload + length)});
  }
  long hypercall(uint32_t number, const uint64_t (&args)[5]) override {
    hypercalls.push_back(number);
    std::memcpy(last_args, args, sizeof(last_args));
    return next_result;
  }
  uint8_t* map_buffer(uint64_t address, uint32_t pages) override {
    if (out_of_memory) return nullptr;
    auto& m = mapped[address];
    m.assign(pages * 4096, 0);
    return m.data();
  }
  void unmap_buffer(uint64_t address, uint32_t pages) override {
    ASSERT_EQ(mapped.at(address).size(), pages * 4096u);
    mapped.erase(address);
  }
  long foreign_copy(uint16_t, uint64_t, uint32_t offset, uint8_t* data, uint32_t length, bool write) override {
    if (foreign_result < 0) return foreign_result;
    if (write)
      std::memcpy(foreign_frame.data() + offset, data, length);
    else
      std::memcpy(data, foreign_frame.data() + offset, length);
    return 0;
  }
  // Lasting mappings: slot -> (domid, frame, the page).
  struct Held {
    uint16_t domid;
    uint64_t frame;
    std::vector<uint8_t> page = std::vector<uint8_t>(4096, 0);
  };
  std::map<uint32_t, Held> held;
  long map_result = 0;
  long map_foreign(uint32_t slot, uint16_t domid, uint64_t frame) override {
    if (map_result < 0) return map_result;
    EXPECT_FALSE(held.count(slot)) << "a slot in use mapped again";
    held[slot] = Held{domid, frame};
    return 0;
  }
  void unmap_foreign(uint32_t slot) override {
    EXPECT_TRUE(held.count(slot)) << "an empty slot unmapped";
    held.erase(slot);
  }
  uint8_t* mapped_page(uint32_t slot) override { return held.at(slot).page.data(); }
  long bind_virq(uint32_t virq, uint32_t& port) override {
    if (virq == 99) return -XEN_EINVAL;
    port = next_port++;
    return 0;
  }
  long bind_interdomain(uint16_t, uint32_t, uint32_t& port) override {
    port = next_port++;
    return 0;
  }
  long notify(uint32_t) override { return 0; }
  long unmask(uint32_t) override { return 0; }
  long close(uint32_t port) override {
    closed.push_back(port);
    return 0;
  }
  void session_opened() override { ++sessions; }
  void shutdown(uint32_t reason) override { shutdowns = int(reason); }
};

struct RelayServer : ::testing::Test {
  FakeDom0 dom0;
  Server server{dom0, dom0, kBase, proto::kFlagTraceOnLink};
  uint32_t seq = 100;

  Sent request(uint8_t type, const std::vector<uint8_t>& payload, uint16_t channel = 1) {
    size_t before = dom0.sent.size();
    server.handle_frame(type, channel, payload.data(), uint32_t(payload.size()));
    EXPECT_EQ(dom0.sent.size(), before + 1) << "every request gets exactly one answer";
    return dom0.sent.back();
  }
  // A request with the next sequence number in front of `rest`.
  Sent next(uint8_t type, std::vector<uint8_t> rest) {
    std::vector<uint8_t> p = fields({u32(seq++)});
    p.insert(p.end(), rest.begin(), rest.end());
    return request(type, p);
  }
  void open() {
    Sent s = request(proto::open, fields({u32(seq++), u32(proto::kProtocolVersion)}));
    ASSERT_EQ(s.type, proto::opened);
  }
  uint64_t alloc(uint32_t pages) {
    Sent s = next(proto::buffer_alloc, fields({u32(pages)}));
    EXPECT_EQ(s.type, proto::buffer);
    return s.u64_at(8);
  }
  void expect_error(const Sent& s, Error code, int64_t detail) {
    ASSERT_EQ(s.type, proto::error);
    EXPECT_EQ(s.error(), code);
    EXPECT_EQ(s.detail(), detail);
  }
  std::vector<uint8_t> hypercall(uint32_t number, uint64_t a0 = 0, uint64_t a1 = 0, uint64_t a2 = 0) {
    return fields({u32(number), u64(a0), u64(a1), u64(a2), u64(0), u64(0)});
  }
};

TEST_F(RelayServer, OpenAnswersWithTheRelaysLimits) {
  Sent s = request(proto::open, fields({u32(7), u32(1)}), 9);
  ASSERT_EQ(s.type, proto::opened);
  EXPECT_EQ(s.channel, 9);
  EXPECT_EQ(s.seq(), 7u);
  EXPECT_EQ(s.u32_at(4), proto::kProtocolVersion);
  EXPECT_EQ(s.u32_at(8), proto::kMaxRequestPayload);
  EXPECT_EQ(s.u32_at(12), proto::kMaxData);
  EXPECT_EQ(s.u32_at(24), proto::kFlagTraceOnLink);
  EXPECT_EQ(dom0.sessions, 1);
  s = request(proto::open, fields({u32(8), u32(2)}));
  expect_error(s, Error::version, proto::kProtocolVersion);
}

TEST_F(RelayServer, RequestsBeforeOpenAreRefused) {
  expect_error(next(proto::hypercall, hypercall(__HYPERVISOR_xen_version)), Error::no_session, 0);
  EXPECT_TRUE(dom0.hypercalls.empty());
}

TEST_F(RelayServer, HypercallIsForwardedWithItsArguments) {
  open();
  uint64_t b = alloc(1);
  dom0.next_result = 0x40011;
  Sent s = next(proto::hypercall, hypercall(__HYPERVISOR_xen_version, XENVER_capabilities, b));
  ASSERT_EQ(s.type, proto::result);
  EXPECT_EQ(int64_t(s.u64_at(4)), 0x40011);
  EXPECT_EQ(dom0.hypercalls.back(), unsigned(__HYPERVISOR_xen_version));
  EXPECT_EQ(dom0.last_args[1], b);
  dom0.next_result = -XEN_ENOSYS;  // the hypervisor's errors are results, not relay errors
  s = next(proto::hypercall, hypercall(__HYPERVISOR_sysctl, b));
  ASSERT_EQ(s.type, proto::result);
  EXPECT_EQ(int64_t(s.u64_at(4)), -XEN_ENOSYS);
}

TEST_F(RelayServer, RefusedHypercallIsNotMadeAndTheRelayGoesOn) {
  open();
  expect_error(next(proto::hypercall, hypercall(__HYPERVISOR_set_trap_table, 0)), Error::refused,
               int64_t(proto::Refusal::hypercall));
  expect_error(next(proto::hypercall, hypercall(__HYPERVISOR_sysctl, 0xffffffff80000000ull)), Error::refused,
               int64_t(proto::Refusal::pointer));
  EXPECT_TRUE(dom0.hypercalls.empty());
  EXPECT_EQ(next(proto::hypercall, hypercall(__HYPERVISOR_xen_version)).type, proto::result);
}

TEST_F(RelayServer, OutOfOrderRequestIsRefusedAndTheExpectedOneStillWorks) {
  open();
  uint32_t expected = seq;
  std::vector<uint8_t> p = fields({u32(expected + 5)});
  auto call = hypercall(__HYPERVISOR_xen_version);
  p.insert(p.end(), call.begin(), call.end());
  expect_error(request(proto::hypercall, p), Error::out_of_order, expected);
  p = fields({u32(expected - 1)});  // a replay
  p.insert(p.end(), call.begin(), call.end());
  expect_error(request(proto::hypercall, p), Error::out_of_order, expected);
  EXPECT_TRUE(dom0.hypercalls.empty());
  EXPECT_EQ(next(proto::hypercall, call).type, proto::result);
}

TEST_F(RelayServer, MalformedAndUnknownFramesGetErrors) {
  open();
  Sent s = next(proto::hypercall, fields({u32(__HYPERVISOR_xen_version)}));  // arguments missing
  expect_error(s, Error::malformed, 8);
  s = next(proto::buffer_alloc, fields({u32(1), u32(0)}));  // one field too many
  expect_error(s, Error::malformed, 12);
  s = request(proto::hypercall, {1, 2});  // not even a sequence number
  expect_error(s, Error::malformed, 2);
  EXPECT_EQ(s.seq(), proto::kNoSequence);
  s = request(proto::result, fields({u32(seq)}));  // an answer type sent to the relay
  expect_error(s, Error::unknown_type, proto::result);
  s = request(0x02, fields({u32(seq)}));  // a trace frame
  expect_error(s, Error::unknown_type, 0x02);
  s = next(0x9e, {});  // a request type nobody defined
  expect_error(s, Error::unknown_type, 0x9e);
  EXPECT_EQ(next(proto::hypercall, hypercall(__HYPERVISOR_xen_version)).type, proto::result);
}

TEST_F(RelayServer, BuffersAreWrittenReadAndFreed) {
  open();
  uint64_t b = alloc(2);
  EXPECT_EQ(b, kBase);
  EXPECT_EQ(dom0.mapped.count(b), 1u);
  std::vector<uint8_t> w = fields({u64(b + 4094)});
  for (uint8_t i = 0; i < 6; ++i) w.push_back(0xa0 + i);
  EXPECT_EQ(next(proto::buffer_write, w).type, proto::ok);
  EXPECT_EQ(dom0.mapped[b][4095], 0xa1);
  Sent s = next(proto::buffer_read, fields({u64(b + 4095), u32(3)}));
  ASSERT_EQ(s.type, proto::data);
  ASSERT_EQ(s.payload.size(), 7u);
  EXPECT_EQ(s.payload[4], 0xa1);
  EXPECT_EQ(s.payload[6], 0xa3);
  EXPECT_EQ(next(proto::buffer_free, fields({u64(b)})).type, proto::ok);
  EXPECT_TRUE(dom0.mapped.empty());
}

TEST_F(RelayServer, BufferThatDoesNotExistIsAnError) {
  open();
  uint64_t b = alloc(1);
  expect_error(next(proto::buffer_write, fields({u64(b + 4096), u32(1)})), Error::no_buffer, int64_t(b + 4096));
  expect_error(next(proto::buffer_read, fields({u64(0x1000), u32(1)})), Error::no_buffer, 0x1000);
  expect_error(next(proto::buffer_free, fields({u64(b + 8)})), Error::no_buffer, int64_t(b + 8));
  expect_error(next(proto::buffer_read, fields({u64(b + 4000), u32(100)})), Error::bad_range, int64_t(b + 4000));
  expect_error(next(proto::buffer_read, fields({u64(b), u32(proto::kMaxData + 1)})), Error::bad_range,
               proto::kMaxData + 1);
  EXPECT_EQ(next(proto::buffer_free, fields({u64(b)})).type, proto::ok);
  expect_error(next(proto::buffer_free, fields({u64(b)})), Error::no_buffer, int64_t(b));  // twice
}

TEST_F(RelayServer, BufferAllocationLimits) {
  open();
  expect_error(next(proto::buffer_alloc, fields({u32(0)})), Error::bad_range, 0);
  expect_error(next(proto::buffer_alloc, fields({u32(1u << 20)})), Error::bad_range, 1 << 20);
  dom0.out_of_memory = true;
  expect_error(next(proto::buffer_alloc, fields({u32(1)})), Error::no_memory, 1);
  EXPECT_EQ(server.buffers().count(), 0u);
  dom0.out_of_memory = false;
  for (uint32_t i = 0; i < lib::relay::BufferTable::kMaxBuffers; ++i) alloc(1);
  expect_error(next(proto::buffer_alloc, fields({u32(1)})), Error::limit, 0);
}

TEST_F(RelayServer, OpenFreesWhatTheLastSessionLeft) {
  open();
  alloc(1);
  alloc(3);
  Sent s = next(proto::evtchn_bind_virq, fields({u32(VIRQ_TBUF)}));
  ASSERT_EQ(s.type, proto::port);
  uint32_t port = s.u32_at(4);
  open();
  EXPECT_TRUE(dom0.mapped.empty());
  EXPECT_EQ(server.buffers().count(), 0u);
  EXPECT_EQ(dom0.closed, std::vector<uint32_t>{port});
  EXPECT_FALSE(server.owns_port(port));
}

TEST_F(RelayServer, ForeignFramesThroughTheBackend) {
  open();
  Sent s = next(proto::foreign_read, fields({u32(DOMID_XEN), u64(0x1234), u32(4000), u32(96)}));
  ASSERT_EQ(s.type, proto::data);
  EXPECT_EQ(s.payload.size(), 100u);
  EXPECT_EQ(s.payload[99], 0x5a);
  std::vector<uint8_t> w = fields({u32(3), u64(0x99), u32(10)});
  w.push_back(0x77);
  EXPECT_EQ(next(proto::foreign_write, w).type, proto::ok);
  EXPECT_EQ(dom0.foreign_frame[10], 0x77);
  dom0.foreign_result = -XEN_ESRCH;
  expect_error(next(proto::foreign_read, fields({u32(7), u64(1), u32(0), u32(8)})), Error::hypervisor, -XEN_ESRCH);
}

TEST_F(RelayServer, ForeignAccessChecks) {
  open();
  expect_error(next(proto::foreign_read, fields({u32(DOMID_IO), u64(0xfee00), u32(0), u32(4)})), Error::refused,
               int64_t(proto::Refusal::special_domain));
  std::vector<uint8_t> w = fields({u32(0), u64(0x99), u32(0)});
  w.push_back(1);
  expect_error(next(proto::foreign_write, w), Error::refused, int64_t(proto::Refusal::own_domain));
  expect_error(next(proto::foreign_read, fields({u32(1), u64(1), u32(4000), u32(97)})), Error::bad_range, 4000);
  expect_error(next(proto::foreign_read, fields({u32(1), u64(1), u32(4097), u32(0)})), Error::bad_range, 4097);
  expect_error(next(proto::foreign_read, fields({u32(1), u64(1ull << 40), u32(0), u32(1)})), Error::bad_range,
               int64_t(1ull << 40));
  EXPECT_EQ(dom0.foreign_frame[0], 0x5a);
}

uint32_t handle_of(const Sent& s) {
  EXPECT_EQ(s.type, proto::mapping);
  return s.u32_at(4);
}

TEST_F(RelayServer, LastingMappingsAreReadWrittenAndUnmapped) {
  open();
  uint32_t handle = handle_of(next(proto::foreign_map, fields({u32(3), u64(0x1234)})));
  EXPECT_NE(handle, 0u);
  ASSERT_EQ(dom0.held.size(), 1u);
  const auto& [slot, held] = *dom0.held.begin();
  EXPECT_EQ(held.domid, 3);
  EXPECT_EQ(held.frame, 0x1234u);
  std::vector<uint8_t> w = fields({u32(handle), u32(4094)});
  w.push_back(0x11);
  w.push_back(0x22);
  EXPECT_EQ(next(proto::mapped_write, w).type, proto::ok);
  EXPECT_EQ(dom0.held.at(slot).page[4095], 0x22);
  Sent s = next(proto::mapped_read, fields({u32(handle), u32(4094), u32(2)}));
  ASSERT_EQ(s.type, proto::data);
  EXPECT_EQ(s.payload.size(), 6u);
  EXPECT_EQ(s.payload[4], 0x11);
  EXPECT_EQ(s.payload[5], 0x22);
  EXPECT_EQ(next(proto::foreign_unmap, fields({u32(handle)})).type, proto::ok);
  EXPECT_TRUE(dom0.held.empty());
  EXPECT_EQ(server.mappings().count(), 0u);
  // The handle is gone, and the slot's next mapping gets another one.
  expect_error(next(proto::mapped_read, fields({u32(handle), u32(0), u32(4)})), Error::no_mapping, handle);
  expect_error(next(proto::foreign_unmap, fields({u32(handle)})), Error::no_mapping, handle);
  uint32_t again = handle_of(next(proto::foreign_map, fields({u32(3), u64(0x1234)})));
  EXPECT_NE(again, handle);
  expect_error(next(proto::mapped_read, fields({u32(handle), u32(0), u32(4)})), Error::no_mapping, handle);
}

TEST_F(RelayServer, LastingMappingsRefuseDom0AndTheReservedDomains) {
  open();
  expect_error(next(proto::foreign_map, fields({u32(0), u64(1)})), Error::refused, int64_t(proto::Refusal::own_domain));
  expect_error(next(proto::foreign_map, fields({u32(DOMID_SELF), u64(1)})), Error::refused,
               int64_t(proto::Refusal::own_domain));
  for (uint32_t domid : {uint32_t(DOMID_XEN), uint32_t(DOMID_IO), uint32_t(DOMID_COW), uint32_t(DOMID_INVALID),
                         uint32_t(DOMID_IDLE), 0x10000u, 0x10001u, 0xffffffffu})
    expect_error(next(proto::foreign_map, fields({u32(domid), u64(1)})), Error::refused,
                 int64_t(proto::Refusal::special_domain));
  expect_error(next(proto::foreign_map, fields({u32(1), u64(1ull << 40)})), Error::bad_range, int64_t(1ull << 40));
  EXPECT_TRUE(dom0.held.empty());
  dom0.map_result = -XEN_ESRCH;
  expect_error(next(proto::foreign_map, fields({u32(7), u64(1)})), Error::hypervisor, -XEN_ESRCH);
  EXPECT_EQ(server.mappings().count(), 0u);
}

TEST_F(RelayServer, HostileMappingHandlesAndRanges) {
  open();
  for (uint32_t bad : {0u, 1u, 0x100u, 0x17fu, 0xffu, 0xffffffffu, 0x80000000u}) {
    expect_error(next(proto::foreign_unmap, fields({u32(bad)})), Error::no_mapping, bad);
    expect_error(next(proto::mapped_read, fields({u32(bad), u32(0), u32(1)})), Error::no_mapping, bad);
    std::vector<uint8_t> w = fields({u32(bad), u32(0)});
    w.push_back(1);
    expect_error(next(proto::mapped_write, w), Error::no_mapping, bad);
  }
  uint32_t handle = handle_of(next(proto::foreign_map, fields({u32(2), u64(5)})));
  // A handle's slot with another generation, and its generation on other slots.
  expect_error(next(proto::mapped_read, fields({u32(handle + 0x100), u32(0), u32(1)})), Error::no_mapping,
               handle + 0x100);
  expect_error(next(proto::mapped_read, fields({u32(handle + 1), u32(0), u32(1)})), Error::no_mapping, handle + 1);
  expect_error(next(proto::mapped_read, fields({u32(handle), u32(4000), u32(97)})), Error::bad_range, 4000);
  expect_error(next(proto::mapped_read, fields({u32(handle), u32(4097), u32(0)})), Error::bad_range, 4097);
  expect_error(next(proto::mapped_read, fields({u32(handle), u32(0), u32(0xffffffff)})), Error::bad_range, 0);
  std::vector<uint8_t> w = fields({u32(handle), u32(4090)});
  w.resize(w.size() + 7, 0xee);
  expect_error(next(proto::mapped_write, w), Error::bad_range, 4090);
  EXPECT_EQ(dom0.held.begin()->second.page[4095], 0);
  expect_error(next(proto::foreign_map, fields({u32(2)})), Error::malformed, 8);
  expect_error(next(proto::foreign_unmap, fields({u32(handle), u32(0)})), Error::malformed, 12);
  expect_error(next(proto::mapped_read, fields({u32(handle), u32(0)})), Error::malformed, 12);
  expect_error(next(proto::mapped_write, fields({u32(handle)})), Error::malformed, 8);
  EXPECT_EQ(server.mappings().count(), 1u);
}

TEST_F(RelayServer, LastingMappingLimits) {
  open();
  using lib::relay::MappingTable;
  for (uint32_t i = 0; i < MappingTable::kMaxPerDomain; ++i)
    handle_of(next(proto::foreign_map, fields({u32(1), u64(100 + i)})));
  expect_error(next(proto::foreign_map, fields({u32(1), u64(200)})), Error::limit, MappingTable::kMaxPerDomain);
  uint32_t domid = 2;
  while (server.mappings().count() < MappingTable::kMaxMappings) {
    Sent s = next(proto::foreign_map, fields({u32(domid), u64(300)}));
    if (s.type == proto::error) {
      ASSERT_EQ(s.error(), Error::limit);
      ++domid;
    }
  }
  expect_error(next(proto::foreign_map, fields({u32(domid + 1), u64(1)})), Error::limit, MappingTable::kMaxMappings);
  EXPECT_EQ(dom0.held.size(), MappingTable::kMaxMappings);
  // A new session unmaps every one.
  open();
  EXPECT_TRUE(dom0.held.empty());
  EXPECT_EQ(server.mappings().count(), 0u);
  EXPECT_EQ(handle_of(next(proto::foreign_map, fields({u32(1), u64(100)}))) & 0xff, 0u);
}

TEST_F(RelayServer, EventChannelsTheHostBound) {
  open();
  Sent s = next(proto::evtchn_bind_virq, fields({u32(VIRQ_TBUF)}));
  ASSERT_EQ(s.type, proto::port);
  uint32_t port = s.u32_at(4);
  EXPECT_TRUE(server.owns_port(port));
  EXPECT_TRUE(server.handle_event(port));
  EXPECT_EQ(dom0.sent.back().type, proto::event);
  EXPECT_EQ(dom0.sent.back().u32_at(0), port);
  size_t sent = dom0.sent.size();
  EXPECT_FALSE(server.handle_event(port + 1));  // the kernel's own port: nothing pushed
  EXPECT_EQ(dom0.sent.size(), sent);
  EXPECT_EQ(next(proto::evtchn_unmask, fields({u32(port)})).type, proto::ok);
  EXPECT_EQ(next(proto::evtchn_notify, fields({u32(port)})).type, proto::ok);
  expect_error(next(proto::evtchn_notify, fields({u32(1)})), Error::no_port, 1);
  expect_error(next(proto::evtchn_close, fields({u32(2)})), Error::no_port, 2);
  expect_error(next(proto::evtchn_bind_virq, fields({u32(99)})), Error::hypervisor, -XEN_EINVAL);
  EXPECT_EQ(next(proto::evtchn_close, fields({u32(port)})).type, proto::ok);
  EXPECT_FALSE(server.owns_port(port));
  s = next(proto::evtchn_bind_interdomain, fields({u32(1), u32(3)}));
  EXPECT_EQ(s.type, proto::port);
  expect_error(next(proto::evtchn_bind_interdomain, fields({u32(0x10000), u32(3)})), Error::bad_range, 0x10000);
}

TEST_F(RelayServer, PortTableLimit) {
  open();
  for (uint32_t i = 0; i < Server::kMaxPorts; ++i)
    ASSERT_EQ(next(proto::evtchn_bind_virq, fields({u32(VIRQ_TBUF)})).type, proto::port);
  expect_error(next(proto::evtchn_bind_virq, fields({u32(VIRQ_TBUF)})), Error::limit, Server::kMaxPorts);
}

TEST_F(RelayServer, ShutdownIsAnsweredFirst) {
  open();
  expect_error(next(proto::shutdown, fields({u32(2)})), Error::bad_range, 2);  // suspend: no
  EXPECT_EQ(dom0.shutdowns, -1);
  Sent s = next(proto::shutdown, fields({u32(0)}));
  EXPECT_EQ(s.type, proto::ok);
  EXPECT_EQ(dom0.shutdowns, 0);
}

TEST_F(RelayServer, ReceiveErrorsBecomeErrorFrames) {
  server.handle_receive_error(Error::corrupt, proto::hypercall, 4, 44);
  const Sent& s = dom0.sent.back();
  EXPECT_EQ(s.channel, 4);
  EXPECT_EQ(s.seq(), proto::kNoSequence);
  EXPECT_EQ(s.error(), Error::corrupt);
  EXPECT_EQ(s.u32_at(8), proto::hypercall);
  EXPECT_EQ(s.detail(), 44);
  EXPECT_EQ(server.stats().errors, 1u);
}

}  // namespace
