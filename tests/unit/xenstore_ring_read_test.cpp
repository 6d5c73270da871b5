// The store's ring page read while the guest writes (tools/xenstore/xenstore.h, read_ring_page):
// pvhv-xenstored reads a domain's page through the relay, a word at a time, and the guest may
// put a request on the ring between any two words. Every request must be served once, whole.
#include <gtest/gtest.h>
#include <stddef.h>
#include <string.h>

#include <string>
#include <vector>

#include "tools/xenstore/xenstore.h"

namespace xenstore {
namespace {

constexpr DomId kDomain = 5;
constexpr unsigned kKeys = 50;  // the nodes written in turn (a directory has a size quota)

// The guest's page and the guest: it writes XS_WRITE requests as xenbus does (the bytes, then
// req_prod; only what fits), after every `every` words the server's reads copy and between two
// polls, and reads every answer the server put on the ring.
class GuestUnderReads {
 public:
  explicit GuestUnderReads(uint32_t every) : every_(every) {}
  unsigned requests = 0;
  std::vector<Message> answers;

  bool read(uint32_t offset, void* out, size_t length) {
    if (offset % 4 || length % 4 || offset + length > sizeof page_) return false;
    auto* from = reinterpret_cast<const char*>(&page_) + offset;
    auto* to = static_cast<char*>(out);
    for (size_t i = 0; i < length; i += 4) {  // a word at a time, as the relay copies
      memcpy(to + i, from + i, 4);
      if (every_ && ++copied_ % every_ == 0) write_a_request();
    }
    return true;
  }
  // The server's fields written back, as the daemon writes them.
  void server_wrote(const xenstore_domain_interface& copy) {
    memcpy(page_.rsp, copy.rsp, sizeof page_.rsp);
    page_.req_cons = copy.req_cons;
    page_.rsp_prod = copy.rsp_prod;
    page_.error = copy.error;
  }
  void write_a_request() {
    std::string key = "data/k" + std::to_string(requests % kKeys), value = "v" + std::to_string(requests);
    std::string bytes = serialize(make_request(XS_WRITE, {key, value}, 0, requests, true));
    XENSTORE_RING_IDX prod = page_.req_prod;
    if (XENSTORE_RING_SIZE - (prod - page_.req_cons) < bytes.size()) return;  // it would wait
    for (char c : bytes) page_.req[MASK_XENSTORE_IDX(prod++)] = c;
    page_.req_prod = prod;  // after the bytes
    ++requests;
  }
  void read_answers() {
    for (; page_.rsp_cons != page_.rsp_prod; ++page_.rsp_cons)
      parser_.push(std::string(1, page_.rsp[MASK_XENSTORE_IDX(page_.rsp_cons)]));
    while (auto m = parser_.next()) answers.push_back(*m);
  }
  void quiet() { every_ = 0; }

 private:
  xenstore_domain_interface page_{};
  MessageParser parser_;
  uint32_t every_, copied_ = 0;
};

// One poll of the daemon's: the page read as read_ring_page reads it, served, written back.
bool poll(GuestUnderReads& guest, RingConnection& conn) {
  RingIndexes seen{};
  xenstore_domain_interface page;
  auto read =
      read_ring_page([&](uint32_t offset, void* out, size_t length) { return guest.read(offset, out, length); },
                     [&](const RingIndexes& i) { return conn.wants_service(i.req_prod, i.rsp_cons); }, seen, page);
  if (read == RingPageRead::failed) return false;
  if (read == RingPageRead::read && conn.serve(page).page_changed) guest.server_wrote(page);
  return !conn.broken();
}

TEST(XenstoreRingRead, AGuestWritingDuringTheReadsHasEveryRequestServedOnce) {
  for (uint32_t every : {1u, 2u, 3u, 5u, 7u, 13u, 64u, 255u, 256u, 257u, 500u, 511u, 512u, 513u}) {
    Store store;
    ASSERT_EQ(create_domain_nodes(store, {kDomain, "guest"}), 0);
    RingConnection conn(store, kDomain);
    GuestUnderReads guest(every);
    for (int round = 0; round < 60; ++round) {
      guest.write_a_request();
      ASSERT_TRUE(poll(guest, conn)) << "writes every " << every << " words, round " << round;
      guest.read_answers();
    }
    guest.quiet();
    for (int round = 0; round < 20; ++round) {
      ASSERT_TRUE(poll(guest, conn)) << "writes every " << every << " words";
      guest.read_answers();
    }
    ASSERT_GT(guest.requests, 60u) << "writes every " << every << " words";
    ASSERT_EQ(guest.answers.size(), guest.requests) << "writes every " << every << " words";
    for (unsigned i = 0; i < guest.requests; ++i) {
      EXPECT_EQ(guest.answers[i].type, uint32_t(XS_WRITE)) << "request " << i << ", every " << every;
      EXPECT_EQ(guest.answers[i].req_id, i);
    }
    for (unsigned i = guest.requests - kKeys; i < guest.requests; ++i)  // the last value of each
      EXPECT_EQ(store.read(domain_path(kDomain) + "/data/k" + std::to_string(i % kKeys)), "v" + std::to_string(i));
  }
}

TEST(XenstoreRingRead, IdleOrFailedReadsReadNoPage) {
  RingIndexes seen{};
  xenstore_domain_interface page{};
  int reads = 0;
  auto counting = [&](uint32_t, void* out, size_t length) {
    memset(out, 0, length);
    ++reads;
    return true;
  };
  EXPECT_EQ(read_ring_page(
                counting, [](const RingIndexes&) { return false; }, seen, page),
            RingPageRead::not_wanted);
  EXPECT_EQ(reads, 1) << "the indexes only";
  auto fails = [](uint32_t, void*, size_t) { return false; };
  EXPECT_EQ(read_ring_page(
                fails, [](const RingIndexes&) { return true; }, seen, page),
            RingPageRead::failed);
}

}  // namespace
}  // namespace xenstore
