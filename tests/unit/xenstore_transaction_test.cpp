// Transactions hold what they touch, not a copy of the store (tools/xenstore/store_view.h):
// their size, their conflicts at commit and their quota, each against Xen 4.17's xenstored.
#include <errno.h>
#include <gtest/gtest.h>

#include "tools/xenstore/xenstore.h"

namespace xenstore {
namespace {

const std::string kOk("OK\0", 3);
std::string err(const char* name) { return std::string(name) + '\0'; }

struct TransactionTest : ::testing::Test {
  explicit TransactionTest(Limits limits = {}) : store(limits) {}
  Store store;
  ConnId dom0 = store.connect(0);
  ConnId dom1 = store.connect(1);

  void SetUp() override {
    ASSERT_EQ(create_domain_nodes(store, {1, "one", "11111111-0000-0000-0000-000000000001", 65536, 2, 100}), 0);
    store.take_output(dom0), store.take_output(dom1);
  }
  // One request's answer (watch events dropped).
  Message call(ConnId c, uint32_t type, std::vector<std::string_view> args, uint32_t tx = 0, bool raw_last = false) {
    store.handle(c, make_request(type, args, tx, 5, raw_last));
    auto out = store.take_output(c);
    for (const auto& m : out)
      if (m.type != XS_WATCH_EVENT) return m;
    ADD_FAILURE() << "no answer";
    return {};
  }
  Message write(ConnId c, std::string_view path, std::string_view value, uint32_t tx = 0) {
    return call(c, XS_WRITE, {path, value}, tx, true);
  }
  uint32_t start(ConnId c) {
    Message m = call(c, XS_TRANSACTION_START, {""});
    EXPECT_EQ(m.type, XS_TRANSACTION_START) << m.payload;
    return static_cast<uint32_t>(std::stoul(m.payload));
  }
  std::string end(ConnId c, uint32_t tx, const char* commit = "T") {
    return call(c, XS_TRANSACTION_END, {commit}, tx).payload;
  }
  // A store of `count` nodes more: /big/dN/nM, 100 to a directory.
  void grow(size_t count) {
    for (size_t i = 0; i < count; ++i)
      ASSERT_EQ(store.write("/big/d" + std::to_string(i / 100) + "/n" + std::to_string(i % 100), "v"), 0);
  }
};

TEST_F(TransactionTest, ATransactionHoldsTheNodesItTouchedWhateverTheStoresSize) {
  grow(20000);
  ASSERT_GT(store.node_count(), 20000u);
  uint32_t tx = start(dom1);
  EXPECT_EQ(store.transaction_nodes(dom1), 0u);  // starting copies nothing
  EXPECT_EQ(call(dom1, XS_READ, {"name"}, tx).payload, "one");
  EXPECT_EQ(write(dom1, "data/x", "1", tx).payload, kOk);
  EXPECT_EQ(call(dom0, XS_READ, {"/big/d7/n3"}, start(dom0)).payload, "v");
  // name; data/x (absent when looked up), data (its parent, given a child).
  EXPECT_EQ(store.transaction_nodes(dom1), 3u);
  EXPECT_EQ(store.transaction_nodes(dom0), 1u);
  // A domain's whole allowance of open transactions, each touching one node, holds ten nodes.
  for (unsigned i = 1; i < Limits{}.transactions_per_domain; ++i) call(dom1, XS_READ, {"domid"}, start(dom1));
  EXPECT_EQ(store.transaction_nodes(dom1), 3u + Limits{}.transactions_per_domain - 1);
  EXPECT_EQ(end(dom1, tx), kOk);
  EXPECT_EQ(store.read("/local/domain/1/data/x"), "1");
}

TEST_F(TransactionTest, ANodeReadThenChangedByAnotherIsEagain) {
  write(dom1, "data/r", "0");
  uint32_t tx = start(dom1);
  EXPECT_EQ(call(dom1, XS_READ, {"data/r"}, tx).payload, "0");
  write(dom1, "data/other", "x", tx);
  write(dom0, "/local/domain/1/data/r", "1");
  EXPECT_EQ(end(dom1, tx), err("EAGAIN"));
  EXPECT_FALSE(store.read("/local/domain/1/data/other"));
  EXPECT_EQ(store.open_transactions(dom1), 0u);
  EXPECT_EQ(store.transaction_nodes(dom1), 0u);
}

TEST_F(TransactionTest, TwoTransactionsWritingOneNodeTheSecondCommitIsEagain) {
  write(dom0, "/w", "0");
  uint32_t t1 = start(dom0), t2 = start(dom0);
  write(dom0, "/w", "1", t1);
  write(dom0, "/w", "2", t2);
  EXPECT_EQ(end(dom0, t1), kOk);
  EXPECT_EQ(end(dom0, t2), err("EAGAIN"));
  EXPECT_EQ(store.read("/w"), "1");
  // A write outside a transaction conflicts the same way.
  uint32_t t3 = start(dom0);
  write(dom0, "/w", "3", t3);
  write(dom0, "/w", "outside");
  EXPECT_EQ(end(dom0, t3), err("EAGAIN"));
  EXPECT_EQ(store.read("/w"), "outside");
}

TEST_F(TransactionTest, ADirectoryListedThenGivenOrDeprivedOfAChildIsEagain) {
  write(dom0, "/d/a", "");
  uint32_t added = start(dom0), untouched = start(dom0);
  EXPECT_EQ(call(dom0, XS_DIRECTORY, {"/d"}, added).payload, std::string("a\0", 2));
  EXPECT_EQ(call(dom0, XS_READ, {"/d/a"}, untouched).payload, "");
  write(dom0, "/d/b", "new");
  EXPECT_EQ(end(dom0, added), err("EAGAIN"));
  uint32_t removed = start(dom0);
  EXPECT_EQ(call(dom0, XS_DIRECTORY, {"/d"}, removed).payload, std::string("a\0b\0", 4));
  ASSERT_EQ(store.remove("/d/b"), 0);
  EXPECT_EQ(end(dom0, removed), err("EAGAIN"));
  // The child it read did not change: the transaction that read only it commits.
  EXPECT_EQ(end(dom0, untouched), kOk);
}

TEST_F(TransactionTest, ACommittedRemovalGivesTheOwnerItsEntriesBack) {
  write(dom1, "data/sub/a", "1");
  write(dom1, "data/sub/b", "2");
  unsigned before = store.owned_nodes(1);
  uint32_t tx = start(dom1);
  EXPECT_EQ(call(dom1, XS_RM, {"data/sub"}, tx).payload, kOk);
  EXPECT_EQ(store.owned_nodes(1), before);  // not before the commit
  EXPECT_EQ(end(dom1, tx), kOk);
  EXPECT_EQ(store.owned_nodes(1), before - 3);
  EXPECT_FALSE(store.read("/local/domain/1/data/sub"));
  EXPECT_EQ(store.directory("/local/domain/1/data"), std::vector<std::string>{});
}

Limits small_transactions() {
  Limits limits;
  limits.nodes_per_transaction = 8;
  return limits;
}
struct TransactionQuotaTest : TransactionTest {
  TransactionQuotaTest() : TransactionTest(small_transactions()) {}
};

// Xen's quota_trans_nodes: an unprivileged domain's transaction touches so many nodes, read or
// written; the request that would touch one more is ENOSPC and leaves the transaction as it was.
TEST_F(TransactionQuotaTest, AnUnprivilegedTransactionTouchesSoManyNodes) {
  for (int i = 0; i < 12; ++i) write(dom1, "data/n" + std::to_string(i), std::to_string(i));
  uint32_t tx = start(dom1);
  for (int i = 0; i < 8; ++i)
    EXPECT_EQ(call(dom1, XS_READ, {"data/n" + std::to_string(i)}, tx).payload, std::to_string(i));
  EXPECT_EQ(call(dom1, XS_READ, {"data/n8"}, tx).payload, err("ENOSPC"));
  EXPECT_EQ(call(dom1, XS_READ, {"data/n3"}, tx).payload, "3");  // held already: no more needed
  EXPECT_EQ(write(dom1, "data/n2", "changed", tx).payload, kOk);
  EXPECT_EQ(store.transaction_nodes(dom1), 8u);
  EXPECT_EQ(end(dom1, tx), kOk);
  EXPECT_EQ(store.read("/local/domain/1/data/n2"), "changed");
  // dom0's transactions are not bounded so.
  uint32_t t0 = start(dom0);
  for (int i = 0; i < 12; ++i)
    EXPECT_EQ(call(dom0, XS_READ, {"/local/domain/1/data/n" + std::to_string(i)}, t0).type, XS_READ);
  EXPECT_EQ(store.transaction_nodes(dom0), 12u);
}

TEST_F(TransactionQuotaTest, ARequestStoppedByTheQuotaChangesNothingInTheTransaction) {
  for (int i = 0; i < 8; ++i) write(dom1, "data/n" + std::to_string(i), "v");
  call(dom0, XS_WATCH, {"/local/domain/1/data", "w"});
  store.take_output(dom0);
  uint32_t tx = start(dom1);
  for (int i = 0; i < 4; ++i) call(dom1, XS_READ, {"data/n" + std::to_string(i)}, tx);
  EXPECT_EQ(write(dom1, "data/n0", "kept", tx).payload, kOk);
  // data/a/b/c/d: four nodes and their parent data, five more than the four held.
  EXPECT_EQ(write(dom1, "data/a/b/c/d", "x", tx).payload, err("ENOSPC"));
  EXPECT_EQ(store.transaction_nodes(dom1), 4u);
  // An RM of a subtree larger than the room left (data, n4..n7 and data's parent): nothing of it
  // removed.
  EXPECT_EQ(call(dom1, XS_RM, {"data"}, tx).payload, err("ENOSPC"));
  EXPECT_EQ(call(dom1, XS_READ, {"data/n1"}, tx).payload, "v");
  EXPECT_EQ(store.transaction_nodes(dom1), 4u);
  EXPECT_EQ(end(dom1, tx), kOk);
  EXPECT_EQ(store.read("/local/domain/1/data/n0"), "kept");
  EXPECT_FALSE(store.read("/local/domain/1/data/a"));
  EXPECT_TRUE(store.read("/local/domain/1/data/n3"));
  // One event: the write that stayed, none from the requests undone.
  auto events = store.take_output(dom0);
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].payload, std::string("/local/domain/1/data/n0\0w\0", 26));
}

}  // namespace
}  // namespace xenstore
