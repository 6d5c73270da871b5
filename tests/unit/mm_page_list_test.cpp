// The frame table's owner lists (Xen's d->page_list): a listed owner's frames are linked as
// they are assigned and leave as they are freed, and a teardown that visits the list by
// rotation reaches every frame even when a visit frees others.
#include <set>

#include "mm_test_fixture.h"

namespace mm::testing {
namespace {

PageList lists[3];  // kGuest and kOtherGuest are listed; everything else is not

PageList* list_of(domid_t owner) { return owner == kGuest || owner == kOtherGuest ? &lists[owner] : nullptr; }

class PageListTest : public MmuTest {
 protected:
  PageListTest() {
    for (PageList& list : lists) list = PageList{};
    frames_.reset();
    frames_.set_owner_lists({list_of});
    for (uint64_t mfn = 10; mfn < 40; ++mfn) frames_.assign(mfn, kGuest);
    for (uint64_t mfn = 40; mfn < 50; ++mfn) frames_.assign(mfn, kOtherGuest);
    for (uint64_t mfn = 60; mfn < 64; ++mfn) frames_.assign(mfn, DOMID_XEN);
  }

  // The list walked from head to tail, checking the back links on the way.
  std::vector<uint64_t> walk(const PageList& list) {
    std::vector<uint64_t> order;
    uint64_t prev = kNoListFrame;
    for (uint64_t mfn = list.head; mfn != kNoListFrame; mfn = info(mfn).list_next) {
      EXPECT_EQ(info(mfn).list_prev, prev) << mfn;
      EXPECT_TRUE(info(mfn).listed()) << mfn;
      order.push_back(mfn);
      prev = mfn;
      if (order.size() > kFrames) break;  // a cycle: the test fails below
    }
    EXPECT_EQ(list.tail, prev);
    EXPECT_EQ(order.size(), list.count);
    return order;
  }

  // Every frame owned by `owner` is on its list, and nothing else is.
  void expect_list_is_ownership(domid_t owner) {
    std::vector<uint64_t> listed = walk(lists[owner]);
    std::set<uint64_t> on_list(listed.begin(), listed.end());
    EXPECT_EQ(on_list.size(), listed.size()) << "no frame twice";
    for (uint64_t mfn = 0; mfn < kFrames; ++mfn) {
      const bool owned = !info(mfn).is_free() && info(mfn).owner() == owner;
      EXPECT_EQ(on_list.count(mfn) == 1, owned) << mfn;
    }
  }
};

TEST_F(PageListTest, AssignedFramesAreListedInOrderWithTheirOwner) {
  std::vector<uint64_t> guest = walk(lists[kGuest]);
  ASSERT_EQ(guest.size(), 30u);
  for (uint64_t i = 0; i < guest.size(); ++i) EXPECT_EQ(guest[i], 10 + i);
  EXPECT_EQ(walk(lists[kOtherGuest]).size(), 10u);
  EXPECT_FALSE(info(kHypervisorFrame).listed()) << "an owner without a list keeps none";
  EXPECT_FALSE(info(kFreeFrame).listed());
  expect_list_is_ownership(kGuest);
  expect_list_is_ownership(kOtherGuest);
}

TEST_F(PageListTest, AFreedFrameLeavesItsListWhereverItIs) {
  for (uint64_t mfn : {uint64_t{10}, uint64_t{25}, uint64_t{39}}) {  // head, middle, tail
    drop_allocation(frames_, mfn);
    EXPECT_TRUE(info(mfn).is_free());
    EXPECT_FALSE(info(mfn).listed());
  }
  EXPECT_EQ(lists[kGuest].count, 27u);
  EXPECT_EQ(lists[kGuest].head, 11u);
  EXPECT_EQ(lists[kGuest].tail, 38u);
  expect_list_is_ownership(kGuest);
  ASSERT_TRUE(frames_.assign(25, kOtherGuest)) << "a freed frame can go to another owner";
  EXPECT_EQ(lists[kOtherGuest].tail, 25u);
  expect_list_is_ownership(kGuest);
  expect_list_is_ownership(kOtherGuest);
}

TEST_F(PageListTest, AReferencedFrameStaysListedUntilItsLastReference) {
  ASSERT_EQ(get_page(frames_, kLooseData, kGuest), 0);
  drop_allocation(frames_, kLooseData);
  EXPECT_TRUE(info(kLooseData).listed()) << "still the domain's: a mapping holds it";
  put_page(frames_, kLooseData);
  EXPECT_FALSE(info(kLooseData).listed());
  expect_list_is_ownership(kGuest);
}

TEST_F(PageListTest, RotatingCountTimesVisitsEachFrameOnceAndKeepsTheList) {
  std::vector<uint64_t> before = walk(lists[kGuest]);
  std::vector<uint64_t> visited;
  for (uint64_t i = 0; i < before.size(); ++i) visited.push_back(frames_.rotate(lists[kGuest]));
  EXPECT_EQ(visited, before);
  EXPECT_EQ(walk(lists[kGuest]), before) << "a full turn leaves the order as it was";
  PageList empty;
  EXPECT_EQ(frames_.rotate(empty), kNoListFrame);
}

// destroydomain's way: unpin every pinned table, then drop every allocation, each by rotating
// the list. Unpinning the L4 frees the tree's frames whose allocation went earlier (as after a
// decrease_reservation of frames still mapped): they leave the list during the visits.
TEST_F(PageListTest, ATeardownByRotationReachesEveryFrameWhileVisitsFreeOthers) {
  build_tree();
  ASSERT_EQ(pin(kL4, MMUEXT_PIN_L4_TABLE), 0);
  for (uint64_t mfn : {kL3, kL2, kL1, kData, kData + 3, kData + 9}) drop_allocation(frames_, mfn);
  EXPECT_EQ(lists[kGuest].count, 30u) << "all still held by the pinned tree";

  PageList& list = lists[kGuest];
  for (uint64_t i = 0, visits = list.count; i < visits && !list.empty(); ++i) {
    const uint64_t mfn = frames_.rotate(list);
    PageInfo& page = frames_.info(mfn);
    if (!page.pinned()) continue;
    set_pinned(page, false);
    put_page_and_type(frames_, mfn);
  }
  EXPECT_EQ(list.count, 24u) << "the unpin freed the six frames only the tree held";
  expect_list_is_ownership(kGuest);
  for (uint64_t i = 0, visits = list.count; i < visits && !list.empty(); ++i)
    drop_allocation(frames_, frames_.rotate(list));

  EXPECT_TRUE(list.empty());
  EXPECT_EQ(list.head, kNoListFrame);
  EXPECT_EQ(list.tail, kNoListFrame);
  for (uint64_t mfn = 10; mfn < 40; ++mfn) EXPECT_TRUE(info(mfn).is_free()) << mfn;
  EXPECT_EQ(walk(lists[kOtherGuest]).size(), 10u) << "another domain's list is untouched";
  EXPECT_TRUE(audit().clean());
}

// The domain id is reused: domain 1 dies while another holder maps one of its frames, its slot
// goes, and a new domain 1 starts with a list of its own. When the old frame's last holder
// lets go, the frame must leave no list but the one it is on: unlinking it from the new
// domain's list made that list's count wrap (its teardown then walked frame 0xffffffff).
class ReusedIdTest : public PageListTest {
 protected:
  // Domain kGuest is gone while kLooseData is held; a new kGuest has one frame, 55.
  void reuse_the_id_while_a_frame_is_held() {
    ASSERT_EQ(get_page(frames_, kLooseData, kGuest), 0);  // another domain's mapping
    for (uint64_t mfn = 10; mfn < 40; ++mfn) drop_allocation(frames_, mfn);
    ASSERT_FALSE(info(kLooseData).is_free()) << "still held";
    lists[kGuest] = PageList{};  // the slot is reused: the new domain's own (empty) list
    ASSERT_TRUE(frames_.assign(kNewFrame, kGuest));
    ASSERT_EQ(lists[kGuest].count, 1u);
  }
  static constexpr uint64_t kNewFrame = 55;
};

TEST_F(ReusedIdTest, AnEarlierDomainsFrameReleasedLaterLeavesTheNewListAlone) {
  reuse_the_id_while_a_frame_is_held();
  put_page(frames_, kLooseData);  // the holder lets go: the frame is freed
  EXPECT_TRUE(info(kLooseData).is_free());
  EXPECT_EQ(lists[kGuest].count, 1u) << "the count of the new domain's list must not change (or wrap)";
  EXPECT_EQ(lists[kGuest].head, kNewFrame);
  EXPECT_EQ(lists[kGuest].tail, kNewFrame);
  EXPECT_EQ(walk(lists[kGuest]), std::vector<uint64_t>{kNewFrame});
  drop_allocation(frames_, kNewFrame);
  EXPECT_TRUE(lists[kGuest].empty());
  EXPECT_EQ(lists[kGuest].head, kNoListFrame);
}

TEST_F(ReusedIdTest, TheAuditReportsAFrameOwnedByNoLiveDomain) {
  reuse_the_id_while_a_frame_is_held();
  AuditReport report = audit({ExternalHold{kLooseData, 1, 0, PageType::None}});  // the holder's reference
  EXPECT_EQ(report.mismatches, 1u) << "the held frame is on no list of a live domain";
  ASSERT_GE(report.recorded, 1u);
  EXPECT_EQ(report.first[0].mfn, kLooseData);
  put_page(frames_, kLooseData);
  EXPECT_TRUE(audit().clean()) << "freed, it is nobody's";
}

TEST_F(ReusedIdTest, AFrameOfAnOwnerWithNoListIsAnOrphanWhereOwnersAreListed) {
  ASSERT_EQ(get_page(frames_, kLooseData, kGuest), 0);
  for (uint64_t mfn = 10; mfn < 40; ++mfn) drop_allocation(frames_, mfn);
  frames_.set_owner_lists({[](domid_t owner) -> PageList* { return owner == kOtherGuest ? &lists[owner] : nullptr; }});
  AuditReport report = audit({ExternalHold{kLooseData, 1, 0, PageType::None}});
  EXPECT_EQ(report.mismatches, 1u) << "owned by an id no live domain has";
  put_page(frames_, kLooseData);
  EXPECT_TRUE(audit().clean());
}

// Xen's assign_pages refuses a dying domain: once its list is closed it is given no frame,
// and what it had stays listed until freed.
TEST_F(PageListTest, AClosedListTakesNoNewFrame) {
  lists[kGuest].closed = true;
  EXPECT_FALSE(frames_.assign(kFreeFrame, kGuest));
  EXPECT_FALSE(frames_.assign(kFreeFrame, kGuest, &lists[kGuest])) << "nor with the list at hand";
  EXPECT_TRUE(info(kFreeFrame).is_free());
  EXPECT_EQ(lists[kGuest].count, 30u);
  drop_allocation(frames_, 20);
  EXPECT_EQ(lists[kGuest].count, 29u) << "frames still leave it";
  EXPECT_TRUE(frames_.assign(kFreeFrame, kOtherGuest)) << "another domain's list is open";
  expect_list_is_ownership(kGuest);
  expect_list_is_ownership(kOtherGuest);
}

// A guest domain id with no list (no such domain) is given nothing: nothing would ever give
// the frame back. Owners that are not guest domains (the hypervisor's) need no list.
TEST_F(PageListTest, AGuestIdWithNoListIsGivenNothing) {
  constexpr domid_t kNoSuchGuest = 7;
  EXPECT_FALSE(frames_.assign(kFreeFrame, kNoSuchGuest));
  EXPECT_TRUE(info(kFreeFrame).is_free());
  EXPECT_TRUE(frames_.assign(kFreeFrame, DOMID_XEN));
  EXPECT_FALSE(info(kFreeFrame).listed());
}

// Each list has its own generation, recorded in its frames: on_list tells a domain's frames
// from those of another list, and from those of an earlier list of the same id.
TEST_F(ReusedIdTest, OnListTellsAFrameOfAnEarlierDomainWithTheSameId) {
  EXPECT_NE(lists[kGuest].generation, lists[kOtherGuest].generation);
  EXPECT_TRUE(frames_.on_list(kLooseData, lists[kGuest]));
  EXPECT_FALSE(frames_.on_list(kForeign, lists[kGuest]));
  const uint32_t earlier = lists[kGuest].generation;
  reuse_the_id_while_a_frame_is_held();
  EXPECT_NE(lists[kGuest].generation, earlier) << "a new list is never named as an old one";
  EXPECT_FALSE(frames_.on_list(kLooseData, lists[kGuest])) << "same owner id, an earlier domain's frame";
  EXPECT_TRUE(frames_.on_list(kNewFrame, lists[kGuest]));
  EXPECT_TRUE(frames_.orphaned(kLooseData));
  EXPECT_FALSE(frames_.orphaned(kNewFrame));
  EXPECT_FALSE(frames_.orphaned(kHypervisorFrame));
  put_page(frames_, kLooseData);
  EXPECT_FALSE(frames_.orphaned(kLooseData)) << "free";
}

}  // namespace
}  // namespace mm::testing
