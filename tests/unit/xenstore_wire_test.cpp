// The xenstore wire format and ring: parsing, serializing, and hostile guests.
#include <errno.h>
#include <gtest/gtest.h>
#include <string.h>

#include <random>

#include "tools/xenstore/xenstore.h"

namespace xenstore {
namespace {

std::string header(uint32_t type, uint32_t req, uint32_t tx, uint32_t len) {
  xsd_sockmsg h{type, req, tx, len};
  return std::string(reinterpret_cast<const char*>(&h), sizeof h);
}

TEST(XenstoreWire, SerializeIsTheHeaderThenThePayload) {
  Message m = make_request(XS_WRITE, {"a/b", "value"}, 5, 9, true);
  EXPECT_EQ(serialize(m), header(XS_WRITE, 9, 5, 9) + std::string("a/b\0value", 9));
}

TEST(XenstoreWire, ParserReassemblesMessagesSplitAnywhere) {
  std::string stream;
  std::vector<Message> sent;
  for (uint32_t i = 0; i < 50; ++i) {
    sent.push_back(make_request(XS_READ, {"path-" + std::to_string(i)}, i, i + 1));
    stream += serialize(sent.back());
  }
  std::mt19937 rng(1);
  MessageParser parser;
  std::vector<Message> got;
  for (size_t at = 0; at < stream.size();) {
    size_t n = std::min<size_t>(stream.size() - at, 1 + rng() % 40);
    parser.push(std::string_view(stream).substr(at, n));
    at += n;
    while (auto m = parser.next()) got.push_back(*m);
  }
  EXPECT_EQ(got, sent);
  EXPECT_EQ(parser.buffered(), 0u);
}

TEST(XenstoreWire, OversizedPayloadIsAProtocolError) {
  MessageParser parser;
  parser.push(header(XS_READ, 1, 0, XENSTORE_PAYLOAD_MAX));
  EXPECT_EQ(parser.state(), MessageParser::State::ok);
  MessageParser bad;
  bad.push(header(XS_READ, 1, 0, XENSTORE_PAYLOAD_MAX + 1));
  EXPECT_EQ(bad.state(), MessageParser::State::error);
  bad.push(serialize(make_request(XS_READ, {"/"})));
  EXPECT_FALSE(bad.next());
  EXPECT_EQ(bad.buffered(), 0u);
}

TEST(XenstoreWire, PermStrings) {
  EXPECT_EQ(parse_perm("b12"), (Perm{12, Perm::both}));
  EXPECT_EQ(parse_perm("n0"), (Perm{0, Perm::none}));
  for (const char* bad : {"", "n", "x1", "r-1", "r1a", "r99999999999"}) EXPECT_FALSE(parse_perm(bad)) << bad;
  EXPECT_EQ(format_perm({7, Perm::write}), "w7");
}

TEST(XenstoreWire, ErrorNamesAreXens) {
  EXPECT_STREQ(error_name(EAGAIN), "EAGAIN");
  EXPECT_STREQ(error_name(E2BIG), "E2BIG");
  EXPECT_STREQ(error_name(12345), "EINVAL");
}

// 10^4 random byte streams, and 10^4 random well-framed requests: the store answers each
// whole request with one answer, nothing crashes, and the tree stays consistent.
TEST(XenstoreWire, RandomStreamsNeverCrashTheStore) {
  std::mt19937 rng(42);
  Store store;
  create_domain_nodes(store, {1, "fuzz"});
  const char* words[] = {"data",
                         "name",
                         "/",
                         "/local",
                         "/local/domain/1/data",
                         "control/shutdown",
                         "@introduceDomain",
                         "a",
                         "T",
                         "F",
                         "1",
                         "n0",
                         "r1",
                         "b1",
                         "",
                         "..",
                         "//",
                         "x/y/z"};
  for (int round = 0; round < 10000; ++round) {
    ConnId c = store.connect(rng() % 3);
    MessageParser parser;
    std::string bytes(rng() % 200, '\0');
    for (auto& b : bytes) b = static_cast<char>(rng());
    parser.push(bytes);
    while (auto m = parser.next()) store.handle(c, *m);
    // A well-framed request of any type with random words.
    Message m;
    m.type = rng() % (XS_TYPE_COUNT + 2);
    m.tx_id = rng() % 4 == 0 ? rng() % 5 : 0;
    m.req_id = static_cast<uint32_t>(round);
    int words_count = rng() % 4;
    for (int i = 0; i < words_count; ++i) {
      m.payload += words[rng() % (sizeof words / sizeof words[0])];
      if (rng() % 5) m.payload.push_back('\0');
    }
    store.handle(c, m);
    auto out = store.take_output(c);
    ASSERT_FALSE(out.empty());
    if (out.front().type != XS_WATCH_EVENT) {
      EXPECT_EQ(out.front().req_id, static_cast<uint32_t>(round));
    }
    store.disconnect(c);
  }
  EXPECT_TRUE(store.read("/"));
  EXPECT_LE(store.node_count(), 1000u);
}

// ---- the ring ----

struct Ring {
  xenstore_domain_interface page{};
  XENSTORE_RING_IDX req_prod = 0, rsp_cons = 0;

  // The guest's side: writes a request if there is room.
  bool send(const Message& m) {
    std::string bytes = serialize(m);
    if (bytes.size() > XENSTORE_RING_SIZE - (req_prod - page.req_cons)) return false;
    for (char b : bytes) page.req[MASK_XENSTORE_IDX(req_prod++)] = b;
    page.req_prod = req_prod;
    return true;
  }
  std::string take() {
    std::string out;
    while (rsp_cons != page.rsp_prod) out.push_back(page.rsp[MASK_XENSTORE_IDX(rsp_cons++)]);
    page.rsp_cons = rsp_cons;
    return out;
  }
};

TEST(XenstoreRing, RequestsAndAnswersCrossTheRing) {
  Store store;
  create_domain_nodes(store, {1, "guest"});
  RingConnection conn(store, 1);
  Ring ring;
  ASSERT_TRUE(ring.send(make_request(XS_READ, {"name"}, 0, 4)));
  auto r = conn.serve(ring.page);
  EXPECT_TRUE(r.notify);
  EXPECT_FALSE(r.broken);
  MessageParser parser;
  parser.push(ring.take());
  auto answer = parser.next();
  ASSERT_TRUE(answer);
  EXPECT_EQ(answer->req_id, 4u);
  EXPECT_EQ(answer->payload, "guest");
  // Nothing to do: no notification.
  EXPECT_FALSE(conn.serve(ring.page).notify);
}

TEST(XenstoreRing, AnswersLargerThanTheRingWaitForTheGuestToRead) {
  Store store;
  create_domain_nodes(store, {1, "guest"});
  store.write("/local/domain/1/data/big", std::string(3000, 'b'));
  RingConnection conn(store, 1);
  Ring ring;
  ring.send(make_request(XS_READ, {"data/big"}, 0, 1));
  conn.serve(ring.page);
  MessageParser parser;
  std::optional<Message> answer;
  for (int i = 0; i < 10 && !answer; ++i) {
    EXPECT_LE(ring.page.rsp_prod - ring.rsp_cons, XENSTORE_RING_SIZE);
    parser.push(ring.take());
    conn.serve(ring.page);
    answer = parser.next();
  }
  ASSERT_TRUE(answer);
  EXPECT_EQ(answer->payload.size(), 3000u);
}

TEST(XenstoreRing, WatchEventsComeThroughTheRing) {
  Store store;
  create_domain_nodes(store, {1, "guest"});
  RingConnection conn(store, 1);
  Ring ring;
  ring.send(make_request(XS_WATCH, {"control/shutdown", "sd"}, 0, 1));
  conn.serve(ring.page);
  ring.take();
  store.write("/local/domain/1/control/shutdown", "poweroff");
  EXPECT_TRUE(conn.serve(ring.page).notify);
  MessageParser parser;
  parser.push(ring.take());
  auto e = parser.next();
  ASSERT_TRUE(e);
  EXPECT_EQ(e->type, XS_WATCH_EVENT);
  EXPECT_EQ(e->payload, std::string("control/shutdown\0sd\0", 20));
}

TEST(XenstoreRing, LyingIndicesBreakTheConnectionWithoutOverrun) {
  Store store;
  {
    RingConnection conn(store, 1);
    xenstore_domain_interface page{};
    page.req_prod = XENSTORE_RING_SIZE + 1;
    auto r = conn.serve(page);
    EXPECT_TRUE(r.broken);
    EXPECT_EQ(page.error, static_cast<uint32_t>(XENSTORE_ERROR_RINGIDX));
    EXPECT_TRUE(conn.serve(page).broken);
  }
  {
    RingConnection conn(store, 1);
    xenstore_domain_interface page{};
    page.rsp_cons = 5;  // consumed answers never produced
    EXPECT_TRUE(conn.serve(page).broken);
  }
  {
    // A guest whose req_cons/rsp_prod fields say anything: ignored, ours are kept.
    RingConnection conn(store, 1);
    Ring ring;
    ring.send(make_request(XS_GET_DOMAIN_PATH, {"1"}, 0, 2));
    ring.page.req_cons = 0xdeadbeef;
    ring.page.rsp_prod = 0x12345678;
    auto r = conn.serve(ring.page);
    EXPECT_FALSE(r.broken);
    EXPECT_EQ(ring.page.rsp_prod, 16u + 16u);
  }
}

TEST(XenstoreRing, AnOversizedRequestBreaksTheConnection) {
  Store store;
  RingConnection conn(store, 1);
  Ring ring;
  std::string h = header(XS_WRITE, 1, 0, XENSTORE_PAYLOAD_MAX + 1);
  for (char b : h) ring.page.req[MASK_XENSTORE_IDX(ring.req_prod++)] = b;
  ring.page.req_prod = ring.req_prod;
  EXPECT_TRUE(conn.serve(ring.page).broken);
  EXPECT_EQ(ring.page.error, static_cast<uint32_t>(XENSTORE_ERROR_PROTO));
}

// Garbage pages: random indices and bytes, served repeatedly; a guest that moves its indices
// within the rules is served, a liar is cut off; the server never writes past a full ring.
TEST(XenstoreRing, GarbagePagesNeverOverrun) {
  std::mt19937 rng(7);
  Store store;
  create_domain_nodes(store, {1, "guest"});
  for (int round = 0; round < 10000; ++round) {
    RingConnection conn(store, 1);
    xenstore_domain_interface page;
    for (size_t i = 0; i < sizeof page; ++i) reinterpret_cast<uint8_t*>(&page)[i] = static_cast<uint8_t>(rng());
    if (round % 2) page.req_prod = rng() % (XENSTORE_RING_SIZE + 1), page.rsp_cons = 0;
    for (int step = 0; step < 3; ++step) {
      auto r = conn.serve(page);
      if (r.broken) break;
      EXPECT_LE(page.rsp_prod - page.rsp_cons, XENSTORE_RING_SIZE);
      page.rsp_cons = page.rsp_prod;  // the guest reads everything, then sends more garbage
      page.req_prod += rng() % (XENSTORE_RING_SIZE + 1 - (page.req_prod - page.req_cons));
    }
  }
}

// A request only half written stays in the ring: a server taking over the ring (a restarted
// daemon, resume()) finds it whole and answers it.
TEST(XenstoreRing, APartialRequestStaysInTheRingForTheNextServer) {
  Store store;
  create_domain_nodes(store, {1, "guest"});
  Ring ring;
  std::string bytes = serialize(make_request(XS_READ, {"name"}, 0, 7));
  {
    RingConnection first(store, 1);
    ASSERT_TRUE(ring.send(make_request(XS_READ, {"domid"}, 0, 6)));
    for (size_t i = 0; i < 10; ++i) ring.page.req[MASK_XENSTORE_IDX(ring.req_prod++)] = bytes[i];
    ring.page.req_prod = ring.req_prod;
    first.serve(ring.page);
    EXPECT_EQ(ring.page.req_cons, ring.req_prod - 10) << "the partial request is left in the ring";
    ring.take();
  }
  for (size_t i = 10; i < bytes.size(); ++i) ring.page.req[MASK_XENSTORE_IDX(ring.req_prod++)] = bytes[i];
  ring.page.req_prod = ring.req_prod;
  RingConnection second(store, 1);
  EXPECT_TRUE(second.wants_service(ring.page.req_prod, ring.page.rsp_cons)) << "before resume: a lie";
  second.resume(ring.page);
  EXPECT_TRUE(second.wants_service(ring.page.req_prod, ring.page.rsp_cons));
  auto r = second.serve(ring.page);
  EXPECT_FALSE(r.broken);
  MessageParser parser;
  parser.push(ring.take());
  auto answer = parser.next();
  ASSERT_TRUE(answer);
  EXPECT_EQ(answer->req_id, 7u);
  EXPECT_EQ(answer->payload, "guest");
  EXPECT_FALSE(second.wants_service(ring.page.req_prod, ring.page.rsp_cons));
}

// A guest that floods requests and never reads: the server stops reading once answers pile
// up, the guest's ring fills, and the server's memory for it stays bounded.
TEST(XenstoreRing, AFloodWithoutReadingIsBounded) {
  Store store;
  create_domain_nodes(store, {1, "guest"});
  store.write("/local/domain/1/data/big", std::string(2000, 'b'));
  RingConnection conn(store, 1);
  Ring ring;
  for (int round = 0; round < 2000; ++round) {
    while (ring.send(make_request(XS_READ, {"data/big"}, 0, round))) {
    }
    conn.serve(ring.page);
  }
  EXPECT_LE(conn.pending_output_bytes(), RingConnection::kMaxPendingOutput + XENSTORE_PAYLOAD_MAX + 64);
  EXPECT_EQ(ring.page.req_prod - ring.page.req_cons, ring.req_prod - ring.page.req_cons);
  EXPECT_FALSE(conn.broken());
  EXPECT_FALSE(conn.wants_service(ring.page.req_prod, ring.page.rsp_cons)) << "full both ways: nothing to do";
  ring.take();  // the guest reads at last: it is served again
  EXPECT_TRUE(conn.wants_service(ring.page.req_prod, ring.page.rsp_cons));
  EXPECT_FALSE(conn.serve(ring.page).broken);
}

// Errors answered are counted with the last one's name (the daemon logs a guest hitting limits).
TEST(XenstoreRing, ErrorAnswersAreCounted) {
  Store store;
  create_domain_nodes(store, {1, "guest"});
  RingConnection conn(store, 1);
  Ring ring;
  ASSERT_TRUE(ring.send(make_request(XS_READ, {"no/such/node"}, 0, 1)));
  ASSERT_TRUE(ring.send(make_request(XS_INTRODUCE, {"2", "5", "6"}, 0, 2)));
  conn.serve(ring.page);
  EXPECT_EQ(conn.errors_answered(), 2u);
  EXPECT_EQ(conn.last_error(), "EACCES");
}

TEST(XenstoreStore, WatchesAreListedAsRegistered) {
  Store store;
  create_domain_nodes(store, {1, "guest"});
  ConnId c = store.connect(1);
  store.handle(c, make_request(XS_WATCH, {"control/shutdown", "tok"}));
  store.handle(c, make_request(XS_WATCH, {"/local/domain/1/data", "abs"}));
  store.handle(c, make_request(XS_WATCH, {"@releaseDomain", "rel"}));
  std::vector<Store::WatchSpec> expected{
      {"control/shutdown", "tok"}, {"/local/domain/1/data", "abs"}, {"@releaseDomain", "rel"}};
  EXPECT_EQ(store.watches(c), expected);
}

}  // namespace
}  // namespace xenstore
