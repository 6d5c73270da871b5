#include "mm_test_fixture.h"

namespace mm::testing {
namespace {

using MmPageRefs = MmuTest;

TEST_F(MmPageRefs, GeneralRefsCheckOwnerAndExistence) {
  EXPECT_EQ(info(kLooseData).general_refs(), 1u) << "allocation ref";
  EXPECT_EQ(get_page(frames_, kLooseData, kGuest), 0);
  EXPECT_EQ(info(kLooseData).general_refs(), 2u);
  EXPECT_EQ(get_page(frames_, kLooseData, kOtherGuest), -XEN_EINVAL);
  EXPECT_EQ(get_page(frames_, kFreeFrame, kGuest), -XEN_EINVAL);
  EXPECT_EQ(get_page(frames_, kFreeFrame, kNoOwner), -XEN_EINVAL);
  EXPECT_EQ(get_page(frames_, kFrames + 5, kGuest), -XEN_EINVAL);
  put_page(frames_, kLooseData);
  EXPECT_EQ(info(kLooseData).general_refs(), 1u);
}

TEST_F(MmPageRefs, GeneralRefOverflowIsRefused) {
  set_general_refs(infos_[kLooseData], kMaxReferences);
  EXPECT_EQ(get_page(frames_, kLooseData, kGuest), -XEN_EINVAL);
  EXPECT_EQ(info(kLooseData).general_refs(), kMaxReferences);
}

TEST_F(MmPageRefs, LastRefFreesTheFrame) {
  EXPECT_EQ(get_page(frames_, kLooseData, kGuest), 0);
  drop_allocation(frames_, kLooseData);
  EXPECT_FALSE(info(kLooseData).allocated());
  EXPECT_EQ(info(kLooseData).owner(), kGuest) << "still held by someone";
  put_page(frames_, kLooseData);
  EXPECT_TRUE(info(kLooseData).is_free());
  EXPECT_EQ(info(kLooseData).owner(), kNoOwner);
  EXPECT_TRUE(frames_.assign(kLooseData, kOtherGuest));
  EXPECT_FALSE(frames_.assign(kLooseData, kGuest)) << "in use";
}

TEST_F(MmPageRefs, WritableTypeIsSharedAndBlocksTableTypes) {
  auto ctx = context();
  EXPECT_EQ(get_page_type(ctx, kSpareL1, PageType::Writable), 0);
  EXPECT_EQ(get_page_type(ctx, kSpareL1, PageType::Writable), 0);
  EXPECT_EQ(info(kSpareL1).type_refs(), 2u);
  EXPECT_EQ(get_page_type(ctx, kSpareL1, PageType::L1), -XEN_EINVAL);
  put_page_type(frames_, kSpareL1);
  EXPECT_EQ(get_page_type(ctx, kSpareL1, PageType::L1), -XEN_EINVAL);
  put_page_type(frames_, kSpareL1);
  EXPECT_EQ(info(kSpareL1).type_refs(), 0u);
  EXPECT_EQ(get_page_type(ctx, kSpareL1, PageType::L1), 0) << "count 0: type may change";
  EXPECT_TRUE(info(kSpareL1).has_type(PageType::L1));
  EXPECT_TRUE(info(kSpareL1).validated());
  EXPECT_EQ(get_page_type(ctx, kSpareL1, PageType::Writable), -XEN_EINVAL);
  EXPECT_EQ(get_page_type(ctx, kSpareL1, PageType::L2), -XEN_EINVAL);
  put_page_type(frames_, kSpareL1);
  EXPECT_FALSE(info(kSpareL1).validated()) << "the last type ref devalidates";
}

struct FlushLog {
  int calls = 0;
  uint64_t mfn = 0;
  PageType from = PageType::None, to = PageType::None;
};

TEST_F(MmPageRefs, TypeChangeRequestsAFlushBeforeValidation) {
  FlushLog log;
  auto ctx = context();
  ctx.type_change.cookie = &log;
  ctx.type_change.flush = [](void* cookie, uint64_t mfn, PageType from, PageType to) {
    auto* l = static_cast<FlushLog*>(cookie);
    ++l->calls;
    l->mfn = mfn;
    l->from = from;
    l->to = to;
  };
  EXPECT_EQ(get_page_type(ctx, kSpareL1, PageType::Writable), 0);
  EXPECT_EQ(log.calls, 0) << "first use of a fresh frame needs no flush";
  EXPECT_FALSE(ctx.effects.flush_domain_tlbs);
  put_page_type(frames_, kSpareL1);
  EXPECT_EQ(get_page_type(ctx, kSpareL1, PageType::Writable), 0);
  EXPECT_EQ(log.calls, 0) << "same type again";
  put_page_type(frames_, kSpareL1);
  EXPECT_EQ(get_page_type(ctx, kSpareL1, PageType::L1), 0);
  EXPECT_EQ(log.calls, 1);
  EXPECT_EQ(log.mfn, kSpareL1);
  EXPECT_EQ(log.from, PageType::Writable);
  EXPECT_EQ(log.to, PageType::L1);
  EXPECT_TRUE(ctx.effects.flush_domain_tlbs);
  put_page_type(frames_, kSpareL1);
}

TEST_F(MmPageRefs, TypeCountOverflowIsRefused) {
  auto ctx = context();
  ASSERT_EQ(get_page_type(ctx, kLooseData, PageType::Writable), 0);
  set_type_refs(infos_[kLooseData], kMaxReferences);
  EXPECT_EQ(get_page_type(ctx, kLooseData, PageType::Writable), -XEN_EINVAL);
  EXPECT_EQ(info(kLooseData).type_refs(), kMaxReferences);
}

TEST_F(MmPageRefs, GetPageAndTypeRollsBackTheGeneralRef) {
  auto ctx = context();
  ASSERT_EQ(get_page_type(ctx, kLooseData, PageType::Writable), 0);
  auto before = snapshot();
  EXPECT_EQ(get_page_and_type(ctx, kLooseData, kGuest, PageType::L1), -XEN_EINVAL);
  EXPECT_COUNTS_UNCHANGED(before);
  EXPECT_EQ(get_page_and_type(ctx, kLooseData, kOtherGuest, PageType::Writable), -XEN_EINVAL);
  EXPECT_COUNTS_UNCHANGED(before);
}

}  // namespace
}  // namespace mm::testing

namespace mm::testing {
namespace {

TEST_F(MmPageRefs, FailedValidationLeavesTheOldTypeRemembered) {
  auto ctx = context();
  ASSERT_EQ(get_page_type(ctx, kSpareL1, PageType::Writable), 0);
  put_page_type(frames_, kSpareL1);
  write(kSpareL1, 9, ro(kForeign));
  ctx.effects = MmuEffects{};
  EXPECT_EQ(get_page_type(ctx, kSpareL1, PageType::L1), -XEN_EBUSY);
  EXPECT_EQ(info(kSpareL1).type_refs(), 0u);
  EXPECT_EQ(info(kSpareL1).type(), PageType::Writable) << "a later use must still see the change";
  EXPECT_FALSE(info(kSpareL1).validated() && info(kSpareL1).type() == PageType::L1);
  write(kSpareL1, 9, E());
  ctx.effects = MmuEffects{};
  EXPECT_EQ(get_page_type(ctx, kSpareL1, PageType::L1), 0);
  EXPECT_TRUE(ctx.effects.flush_domain_tlbs);
  put_page_type(frames_, kSpareL1);
}

}  // namespace
}  // namespace mm::testing
