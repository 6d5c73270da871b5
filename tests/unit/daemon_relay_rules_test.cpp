// What pvhvd does with a relay client's frames (tools/daemon/relay_rules.h): OPEN answered
// locally, the relay's sequence rules, forwarding, ownership of buffers and ports, drops.
#include <gtest/gtest.h>

#include <vector>

#include "tools/daemon/relay_rules.h"
#include "common/relay/protocol.h"

namespace {
using pvhv::daemon::RelayDecision;
using pvhv::daemon::RelayRules;
namespace proto = ::relay;
using Kind = RelayDecision::Kind;

struct Bytes {
  std::vector<uint8_t> v;
  Bytes& u32(uint64_t x) {
    for (int i = 0; i < 4; ++i) v.push_back(uint8_t(x >> (8 * i)));
    return *this;
  }
  Bytes& u64(uint64_t x) {
    for (int i = 0; i < 8; ++i) v.push_back(uint8_t(x >> (8 * i)));
    return *this;
  }
};

RelayDecision request(RelayRules& r, uint8_t type, const Bytes& b) {
  return r.on_request(type, b.v.data(), uint32_t(b.v.size()));
}

uint32_t error_code(const RelayDecision& d) {
  proto::Reader r(d.payload.data(), d.payload.size());
  r.u32();
  return r.u32();
}

TEST(DaemonRelayRules, OpenIsAnsweredLocallyAndNumbersAreTheRelays) {
  RelayRules r;
  auto d = request(r, proto::hypercall, Bytes().u32(5).u32(17).u64(0).u64(0).u64(0).u64(0).u64(0));
  ASSERT_EQ(d.kind, Kind::answer);
  EXPECT_EQ(d.type, proto::error);
  EXPECT_EQ(error_code(d), uint32_t(proto::Error::no_session));
  d = request(r, proto::open, Bytes().u32(100).u32(2));
  EXPECT_EQ(error_code(d), uint32_t(proto::Error::version));
  d = request(r, proto::open, Bytes().u32(100).u32(1));
  ASSERT_EQ(d.kind, Kind::answer);
  EXPECT_EQ(d.type, proto::opened);
  EXPECT_FALSE(d.release_first);
  d = request(r, proto::hypercall, Bytes().u32(105).u32(17).u64(0).u64(0).u64(0).u64(0).u64(0));
  EXPECT_EQ(error_code(d), uint32_t(proto::Error::out_of_order));
  d = request(r, proto::hypercall, Bytes().u32(101).u32(17).u64(0).u64(0).u64(0).u64(0).u64(0));
  ASSERT_EQ(d.kind, Kind::forward);
  EXPECT_EQ(d.type, proto::hypercall);
  EXPECT_EQ(d.payload.size(), 44u);  // without the client's number
  // The answer goes back under the client's number.
  Bytes result;
  result.u64(0x40011);
  auto a = r.on_answer(proto::hypercall, d.payload, proto::result, result.v);
  EXPECT_EQ(a.type, proto::result);
  proto::Reader back(a.payload.data(), a.payload.size());
  EXPECT_EQ(back.u32(), 101u);
  EXPECT_EQ(back.u64(), 0x40011u);
  // Malformed: answered, and the number used up.
  d = request(r, proto::buffer_alloc, Bytes().u32(102));
  EXPECT_EQ(error_code(d), uint32_t(proto::Error::malformed));
  d = request(r, proto::buffer_alloc, Bytes().u32(103).u32(1));
  EXPECT_EQ(d.kind, Kind::forward);
}

TEST(DaemonRelayRules, OnlyItsOwnBuffersAndPorts) {
  RelayRules r;
  request(r, proto::open, Bytes().u32(0).u32(1));
  auto d = request(r, proto::buffer_alloc, Bytes().u32(1).u32(2));
  ASSERT_EQ(d.kind, Kind::forward);
  r.on_answer(proto::buffer_alloc, d.payload, proto::buffer, Bytes().u32(2).u64(0x1000).v);
  d = request(r, proto::buffer_write, [] {
    Bytes b;
    b.u32(2).u64(0x1000 + 8000);
    b.v.resize(b.v.size() + 192);
    return b;
  }());
  EXPECT_EQ(d.kind, Kind::forward);  // inside its 2 pages
  d = request(r, proto::buffer_read, Bytes().u32(3).u64(0x1000 + 8000).u32(193));
  EXPECT_EQ(d.kind, Kind::drop);  // one byte past its end
  RelayRules s;
  request(s, proto::open, Bytes().u32(0).u32(1));
  EXPECT_EQ(request(s, proto::buffer_free, Bytes().u32(1).u64(0x1000)).kind, Kind::drop);  // another's
  RelayRules t;
  request(t, proto::open, Bytes().u32(0).u32(1));
  EXPECT_EQ(request(t, proto::evtchn_unmask, Bytes().u32(1).u32(7)).kind, Kind::drop);
  RelayRules u;
  request(u, proto::open, Bytes().u32(0).u32(1));
  d = request(u, proto::evtchn_bind_virq, Bytes().u32(1).u32(3));
  ASSERT_EQ(d.kind, Kind::forward);
  u.on_answer(proto::evtchn_bind_virq, d.payload, proto::port, Bytes().u32(9).v);
  EXPECT_TRUE(u.owns_port(9));
  EXPECT_EQ(request(u, proto::evtchn_unmask, Bytes().u32(2).u32(9)).kind, Kind::forward);
  d = request(u, proto::evtchn_close, Bytes().u32(3).u32(9));
  ASSERT_EQ(d.kind, Kind::forward);
  u.on_answer(proto::evtchn_close, d.payload, proto::ok, {});
  EXPECT_FALSE(u.owns_port(9));
  // A second OPEN: what it held is released first.
  d = request(r, proto::open, Bytes().u32(50).u32(1));
  EXPECT_TRUE(d.release_first);
  EXPECT_EQ(r.buffers().size(), 1u);  // the caller releases, then forgets
}

TEST(DaemonRelayRules, OnlyItsOwnLastingMappings) {
  RelayRules r;
  request(r, proto::open, Bytes().u32(0).u32(1));
  // A handle the daemon holds for a ring (or any it never got): no mapping of this client.
  auto e = request(r, proto::mapped_write, Bytes().u32(1).u32(0x105).u32(0).u32(0));
  ASSERT_EQ(e.kind, Kind::answer);
  EXPECT_EQ(error_code(e), uint32_t(proto::Error::no_mapping));
  EXPECT_EQ(request(r, proto::foreign_unmap, Bytes().u32(2).u32(0x105)).kind, Kind::answer);
  RelayRules s;
  request(s, proto::open, Bytes().u32(0).u32(1));
  auto d = request(s, proto::foreign_map, Bytes().u32(1).u32(3).u64(0x1234));
  ASSERT_EQ(d.kind, Kind::forward);
  auto a = s.on_answer(proto::foreign_map, d.payload, proto::mapping, Bytes().u32(0x207).v);
  EXPECT_EQ(a.type, proto::mapping);
  EXPECT_TRUE(s.owns_mapping(0x207));
  EXPECT_EQ(request(s, proto::mapped_read, Bytes().u32(2).u32(0x207).u32(0).u32(16)).kind, Kind::forward);
  EXPECT_EQ(error_code(request(s, proto::mapped_read, Bytes().u32(3).u32(0x208).u32(0).u32(16))),
            uint32_t(proto::Error::no_mapping));
  RelayRules t;
  request(t, proto::open, Bytes().u32(0).u32(1));
  d = request(t, proto::foreign_map, Bytes().u32(1).u32(3).u64(0x1234));
  t.on_answer(proto::foreign_map, d.payload, proto::mapping, Bytes().u32(0x107).v);
  // A write of more than a frame is malformed; a refused map records nothing.
  Bytes big;
  big.u32(2).u32(0x107).u32(0);
  big.v.resize(big.v.size() + 4097);
  d = request(t, proto::mapped_write, big);
  EXPECT_EQ(error_code(d), uint32_t(proto::Error::malformed));
  d = request(t, proto::foreign_map, Bytes().u32(3).u32(0).u64(1));
  ASSERT_EQ(d.kind, Kind::forward);
  t.on_answer(proto::foreign_map, d.payload, proto::error, Bytes().u32(11).u32(0x8d).u64(4).v);
  EXPECT_EQ(t.mappings().size(), 1u);
  d = request(t, proto::foreign_unmap, Bytes().u32(4).u32(0x107));
  ASSERT_EQ(d.kind, Kind::forward);
  t.on_answer(proto::foreign_unmap, d.payload, proto::ok, {});
  EXPECT_FALSE(t.owns_mapping(0x107));
  EXPECT_EQ(error_code(request(t, proto::foreign_unmap, Bytes().u32(5).u32(0x107))),
            uint32_t(proto::Error::no_mapping));
}

TEST(DaemonRelayRules, ShutdownAndNonRequestsAreDropped) {
  RelayRules r;
  request(r, proto::open, Bytes().u32(0).u32(1));
  EXPECT_EQ(request(r, proto::shutdown, Bytes().u32(1).u32(0)).kind, Kind::drop);
  RelayRules s;
  request(s, proto::open, Bytes().u32(0).u32(1));
  EXPECT_EQ(request(s, proto::result, Bytes().u32(1).u64(0)).kind, Kind::drop);
  EXPECT_EQ(request(s, 0x01, Bytes().u32(1)).kind, Kind::drop);  // a trace type
}

// 10^4 random frames: every one answered, forwarded or dropped, never anything else.
TEST(DaemonRelayRules, RandomFramesGetADecision) {
  uint64_t x = 10;
  auto next = [&] {
    x ^= x << 13, x ^= x >> 7, x ^= x << 17;
    return x;
  };
  for (int i = 0; i < 10000; ++i) {
    RelayRules r;
    request(r, proto::open, Bytes().u32(0).u32(1));
    std::vector<uint8_t> payload(next() % 64);
    for (auto& b : payload) b = uint8_t(next());
    if (payload.size() >= 4) payload[0] = 1, payload[1] = payload[2] = payload[3] = 0;
    auto d = r.on_request(uint8_t(0x80 + next() % 0x50), payload.data(), uint32_t(payload.size()));
    EXPECT_TRUE(d.kind == Kind::answer || d.kind == Kind::forward || d.kind == Kind::drop);
    if (d.kind == Kind::forward) {
      EXPECT_EQ(d.payload.size() + 4, payload.size());
    }
  }
}
}  // namespace
