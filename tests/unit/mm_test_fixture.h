#pragma once
// Shared fixture for the mm_*_test.cpp files: a small fake machine (64 frames) with one
// guest domain, a second guest domain, hypervisor frames, and helpers to build tables.
#include <gtest/gtest.h>

#include <cstring>
#include <memory>
#include <vector>

#include "mm/audit.h"
#include "mm/entry_rules.h"
#include "mm/frame_table.h"
#include "mm/mmu_context.h"
#include "mm/mmu_update.h"
#include "mm/mmuext_op.h"
#include "mm/page_refs.h"
#include "mm/table_access.h"
#include "mm/va_mapping.h"

namespace mm::testing {

using E = PageTableEntry;

inline constexpr domid_t kGuest = 1;
inline constexpr domid_t kOtherGuest = 2;
inline constexpr uint64_t kFrames = 64;
// Frame plan: 10..39 guest, 40..49 other guest, 50..59 free, 60..63 hypervisor.
inline constexpr uint64_t kL4 = 10, kL3 = 11, kL2 = 12, kL1 = 13;
inline constexpr uint64_t kSpareL4 = 14, kSpareL3 = 15, kSpareL2 = 16, kSpareL1 = 17;
inline constexpr uint64_t kData = 20;       // 20..29 data frames mapped by kL1
inline constexpr uint64_t kLooseData = 30;  // 30..39 not mapped by anything
inline constexpr uint64_t kForeign = 40;
inline constexpr uint64_t kFreeFrame = 50;
inline constexpr uint64_t kHypervisorFrame = 60;
inline constexpr uint64_t kM2pFrame = 61;

inline constexpr uint64_t kTableFlags = E::kPresent | E::kWritable | E::kUser | E::kAccessed;
inline constexpr uint64_t kDataRw = E::kPresent | E::kWritable | E::kUser | E::kAccessed;
inline constexpr uint64_t kDataRo = E::kPresent | E::kUser | E::kAccessed;

struct alignas(4096) Frame {
  uint8_t bytes[4096];
};

class MmuTest : public ::testing::Test {
 protected:
  MmuTest()
      : storage_(new Frame[kFrames]),
        infos_(kFrames),
        frames_(infos_.data(), kFrames, MachineMemory{reinterpret_cast<uint8_t*>(storage_.get()), kFrames}),
        m2p_(kFrames, ~uint64_t{0}) {
    std::memset(storage_.get(), 0, sizeof(Frame) * kFrames);
    frames_.reset();
    for (uint64_t mfn = 10; mfn < 40; ++mfn) frames_.assign(mfn, kGuest);
    for (uint64_t mfn = 40; mfn < 50; ++mfn) frames_.assign(mfn, kOtherGuest);
    for (uint64_t mfn = 60; mfn < 64; ++mfn) frames_.assign(mfn, DOMID_XEN);
    for (unsigned slot = kFirstHypervisorSlot; slot <= kLastHypervisorSlot; ++slot)
      slots_.entries[slot - kFirstHypervisorSlot] = E::from_mfn(kHypervisorFrame, E::kPresent | E::kWritable);
    slots_.entries[kReadOnlyM2pSlot - kFirstHypervisorSlot] = E::from_mfn(kM2pFrame, E::kPresent | E::kUser);
  }

  MmuContext context(DomainIdentity who = DomainIdentity{kGuest, false, false}) {
    return MmuContext{frames_, who, slots_, MachToPhysTable{m2p_.data(), m2p_.size()}};
  }

  void write(uint64_t table, unsigned index, E entry) { table_entries(frames_, table)[index] = entry.raw(); }
  E read(uint64_t table, unsigned index) const { return load_entry(frames_, table, index); }
  static E link(uint64_t mfn) { return E::from_mfn(mfn, kTableFlags); }
  static E rw(uint64_t mfn) { return E::from_mfn(mfn, kDataRw); }
  static E ro(uint64_t mfn) { return E::from_mfn(mfn, kDataRo); }

  // kL4[0] -> kL3[0] -> kL2[0] -> kL1, kL1[i] maps kData+i RW for i < 5, RO for 5..9.
  void build_tree() {
    write(kL4, 0, link(kL3));
    write(kL3, 0, link(kL2));
    write(kL2, 0, link(kL1));
    for (unsigned i = 0; i < 10; ++i) write(kL1, i, i < 5 ? rw(kData + i) : ro(kData + i));
  }

  int pin(uint64_t mfn, unsigned cmd) {
    mmuext_op_t op{};
    op.cmd = cmd;
    op.arg1.mfn = mfn;
    auto ctx = context();
    return mmuext_op(ctx, bases_, op);
  }
  int unpin(uint64_t mfn) { return pin(mfn, MMUEXT_UNPIN_TABLE); }

  int update(uint64_t table, unsigned index, E value, unsigned cmd = MMU_NORMAL_PT_UPDATE,
             DomainIdentity who = DomainIdentity{kGuest, false, false}) {
    mmu_update_t request{};
    request.ptr = (table << kPageShift) + index * 8 + cmd;
    request.val = value.raw();
    auto ctx = context(who);
    return mmu_update(ctx, request);
  }

  // mmu_update with foreigndom = page_owner (already permitted by the hypercall).
  int update_as(uint64_t table, unsigned index, E value, domid_t page_owner, DomainIdentity who) {
    mmu_update_t request{};
    request.ptr = (table << kPageShift) + index * 8 + MMU_NORMAL_PT_UPDATE;
    request.val = value.raw();
    auto ctx = context(who);
    ctx.page_owner = page_owner;
    return mmu_update(ctx, request);
  }

  const PageInfo& info(uint64_t mfn) const { return frames_.info(mfn); }
  std::vector<PageInfo> snapshot() const { return infos_; }

  // Audit with the vCPU's base pointers (each holds a general and an L4 type ref).
  AuditReport audit(const std::vector<ExternalHold>& extra = {}) {
    std::vector<ExternalHold> holds = extra;
    for (uint64_t base : {bases_.kernel_mfn, bases_.user_mfn})
      if (base != 0) holds.push_back(ExternalHold{base, 1, 1, PageType::L4});
    std::vector<ExpectedFrame> scratch(kFrames);
    return audit_frame_table(frames_, holds.data(), static_cast<unsigned>(holds.size()), scratch.data());
  }

  std::unique_ptr<Frame[]> storage_;
  std::vector<PageInfo> infos_;
  FrameTable frames_;
  HypervisorL4Slots slots_;
  std::vector<uint64_t> m2p_;
  VcpuBasePointers bases_;
};

// A frame's state changed outright, as no operation would: for tests that set up broken or
// extreme states.
inline void set_general_refs(PageInfo& p, uint32_t refs) { p.set_counts(refs, p.owner(), p.allocated()); }
inline void set_type_refs(PageInfo& p, uint32_t refs) { p.set_type_state(refs, p.type(), p.validated(), p.pinned()); }
inline void set_type(PageInfo& p, PageType type) { p.set_type_state(p.type_refs(), type, p.validated(), p.pinned()); }
inline void set_validated(PageInfo& p, bool validated) {
  p.set_type_state(p.type_refs(), p.type(), validated, p.pinned());
}
inline void set_pinned(PageInfo& p, bool pinned) { p.set_type_state(p.type_refs(), p.type(), p.validated(), pinned); }
inline void set_linear_entries(PageInfo& p, uint16_t entries) { p.set_linear_counts(entries, p.linear_uses()); }
inline void set_linear_uses(PageInfo& p, uint16_t uses) { p.set_linear_counts(p.linear_entries(), uses); }

inline bool same_counts(const PageInfo& a, const PageInfo& b) {
  return a.general_refs() == b.general_refs() && a.type_refs() == b.type_refs() && a.owner() == b.owner() &&
         a.pinned() == b.pinned() && a.allocated() == b.allocated() &&
         (a.type_refs() == 0 || (a.type() == b.type() && a.validated() == b.validated()));
}

// Every frame's counts, owner and flags are exactly as in `before`.
#define EXPECT_COUNTS_UNCHANGED(before)                                                                                \
  do {                                                                                                                 \
    for (uint64_t mfn_ = 0; mfn_ < ::mm::testing::kFrames; ++mfn_)                                                     \
      EXPECT_TRUE(::mm::testing::same_counts((before)[mfn_], info(mfn_)))                                              \
          << "frame " << mfn_ << " general " << info(mfn_).general_refs() << " (was " << (before)[mfn_].general_refs() \
          << ") type refs " << info(mfn_).type_refs() << " (was " << (before)[mfn_].type_refs() << ")";                \
  } while (0)

#define EXPECT_AUDIT_CLEAN()                                                          \
  do {                                                                                \
    ::mm::AuditReport report_ = audit();                                              \
    EXPECT_TRUE(report_.clean()) << report_.mismatches << " mismatches, first frame " \
                                 << (report_.recorded ? report_.first[0].mfn : 0);    \
  } while (0)

}  // namespace mm::testing
