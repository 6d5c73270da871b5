// The PV MMU on several CPUs (xen/mm/README.md, "Locking"): host threads stand for CPUs and race
// the counts, the types, pins, validation and entry updates of one small machine, then the
// audit must be clean and no count wrapped or went below zero. The same tests build into
// unit_tests_tsan under ThreadSanitizer (tests/unit/CMakeLists.txt, option PVHV_TSAN_TESTS),
// which reports any access the atomics and the frame locks leave unordered.
//
// The lock-order hooks (mm/mm_locks.h) are installed for every test of the executable: each
// thread keeps its held locks as a CPU does, and a violation is counted (every test here
// checks none happened).
#include <atomic>
#include <string>
#include <thread>
#include <vector>

#include "emulate/arithmetic_flags.h"
#include "emulate/pte_commit.h"
#include "mm/entry_update.h"
#include "mm/mm_locks.h"
#include "mm/table_links.h"
#include "mm_test_fixture.h"

namespace mm::testing {
namespace {

std::atomic<unsigned> lock_order_violations{0};
std::atomic<uint64_t> waits{0};  // turns of the MMU's waits (LockHooks::relax): contention happened
thread_local lock_order::HeldLocks held_locks;

void note(lock_order::Verdict verdict) {
  if (!verdict.ok()) lock_order_violations.fetch_add(1);
}

// Installed before main: every unit test's MMU locks are checked.
struct HostLockChecks {
  HostLockChecks() {
    set_lock_hooks(
        LockHooks{[](const void* lock, const lock_order::LockClass& klass) { note(held_locks.acquire(lock, klass)); },
                  [](const void* lock, const lock_order::LockClass&) { note(held_locks.release(lock)); },
                  [] {
                    waits.fetch_add(1, std::memory_order_relaxed);
                    std::this_thread::yield();
                  },
                  [](const void* lock, const lock_order::LockClass& klass) {
                    note(held_locks.acquired_without_waiting(lock, klass));
                  }});
  }
} host_lock_checks;

constexpr unsigned kThreads = 4;

// Runs body(thread index) on kThreads threads started together.
template <typename Body>
void race(Body body) {
  std::atomic<unsigned> ready{0};
  std::vector<std::thread> threads;
  for (unsigned t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      ready.fetch_add(1);
      while (ready.load() < kThreads) std::this_thread::yield();
      body(t);
    });
  for (std::thread& thread : threads) thread.join();
}

class MmSmpRace : public MmuTest {
 protected:
  void SetUp() override { lock_order_violations = 0; }
  void TearDown() override {
    EXPECT_EQ(lock_order_violations.load(), 0u) << "a lock taken against the order (mm/mm_locks.h)";
    // No count wrapped or went below zero: a wrapped count reads near 2^32.
    for (uint64_t mfn = 0; mfn < kFrames; ++mfn) {
      EXPECT_LT(info(mfn).general_refs(), 1000u) << mfn;
      EXPECT_LT(info(mfn).type_refs(), 1000u) << mfn;
      EXPECT_FALSE(info(mfn).locked()) << mfn;
    }
  }
  unsigned iterations() const { return 20000; }
};

TEST_F(MmSmpRace, GeneralReferencesNeitherWrapNorGetLost) {
  std::atomic<unsigned> refused{0};
  race([&](unsigned) {
    for (unsigned i = 0; i < iterations(); ++i) {
      if (get_page(frames_, kLooseData, kGuest) != 0) {
        refused.fetch_add(1);
        continue;
      }
      EXPECT_EQ(info(kLooseData).owner(), kGuest);
      put_page(frames_, kLooseData);
    }
  });
  EXPECT_EQ(refused.load(), 0u);
  EXPECT_EQ(info(kLooseData).general_refs(), 1u) << "the allocation's alone";
  EXPECT_AUDIT_CLEAN();
}

// The allocation goes while others take and drop references: the frame is freed exactly once,
// by whichever thread drops the last reference, and nothing is referenced after that.
TEST_F(MmSmpRace, TheLastReferenceFreesTheFrameOnce) {
  static std::atomic<unsigned> released{0};
  released = 0;
  frames_.set_release_hook(FrameTable::ReleaseHook{[](uint64_t, domid_t, bool) { released.fetch_add(1); }});
  race([&](unsigned t) {
    for (unsigned i = 0; i < iterations(); ++i) {
      if (t == 0 && i == iterations() / 2) drop_allocation(frames_, kLooseData);
      if (get_page(frames_, kLooseData, kGuest) == 0) put_page(frames_, kLooseData);
    }
  });
  EXPECT_EQ(released.load(), 1u);
  EXPECT_TRUE(info(kLooseData).is_free());
  EXPECT_EQ(get_page(frames_, kLooseData, kGuest), error(XEN_EINVAL));
  frames_.set_release_hook({});
}

// Two threads map a frame writable, two pin it as an L1 (an empty table: validated at once):
// while a thread holds its reference the frame is of its type, so never both at once.
TEST_F(MmSmpRace, AFrameIsNeverWritableAndATableAtOnce) {
  std::atomic<unsigned> writable{0}, table{0};
  race([&](unsigned t) {
    MmuContext ctx = context();
    const PageType want = t % 2 ? PageType::Writable : PageType::L1;
    for (unsigned i = 0; i < iterations(); ++i) {
      if (get_page_and_type(ctx, kLooseData, kGuest, want) != 0) continue;
      EXPECT_EQ(info(kLooseData).type(), want);
      EXPECT_TRUE(info(kLooseData).validated());
      (want == PageType::Writable ? writable : table).fetch_add(1);
      put_page_and_type(frames_, kLooseData);
    }
  });
  EXPECT_GT(writable.load() + table.load(), 0u);
  EXPECT_EQ(info(kLooseData).type_refs(), 0u);
  EXPECT_EQ(info(kLooseData).general_refs(), 1u);
  EXPECT_AUDIT_CLEAN();
}

// Validation racing a type change: threads link and unlink an L1 full of writable mappings
// (each link validates it from a zero type count, each unlink tears it down), others map the
// same frame writable. Exactly one kind wins each time; the counts add up.
TEST_F(MmSmpRace, ValidationRacesATypeChange) {
  build_tree();
  ASSERT_EQ(pin(kL4, MMUEXT_PIN_L4_TABLE), 0);
  for (unsigned i = 0; i < 8; ++i) write(kSpareL1, i, rw(kLooseData + i));
  race([&](unsigned t) {
    for (unsigned i = 0; i < iterations() / 4; ++i) {
      if (t < 2) {
        const unsigned slot = 10 + t;
        if (update(kL2, slot, link(kSpareL1)) == 0) {
          EXPECT_EQ(update(kL2, slot, E()), 0);
        }
      } else {
        const unsigned slot = 200 + t;
        if (update(kL1, slot, rw(kSpareL1)) == 0) {
          EXPECT_EQ(update(kL1, slot, E()), 0);
        }
      }
    }
  });
  EXPECT_EQ(info(kSpareL1).type_refs(), 0u);
  for (unsigned i = 0; i < 8; ++i) EXPECT_EQ(info(kLooseData + i).general_refs(), 1u) << i;
  EXPECT_AUDIT_CLEAN();
}

// Pins and unpins of one table: of two pins only one takes the pin, of two unpins only one
// drops it.
TEST_F(MmSmpRace, PinsAndUnpinsOfOneTable) {
  build_tree();
  std::atomic<int> pinned{0};
  race([&](unsigned t) {
    for (unsigned i = 0; i < iterations() / 2; ++i) {
      if (t % 2 == 0) {
        if (pin(kL2, MMUEXT_PIN_L2_TABLE) == 0) pinned.fetch_add(1);
      } else {
        if (unpin(kL2) == 0) pinned.fetch_sub(1);
      }
    }
  });
  ASSERT_TRUE(pinned == 0 || pinned == 1) << pinned.load();
  EXPECT_EQ(info(kL2).pinned(), pinned == 1);
  EXPECT_EQ(info(kL2).type_refs(), pinned == 1 ? 1u : 0u);
  EXPECT_EQ(info(kL1).type_refs(), pinned == 1 ? 1u : 0u) << "validated with the L2, torn down with it";
  EXPECT_AUDIT_CLEAN();
  if (pinned == 1) {
    EXPECT_EQ(unpin(kL2), 0);
  }
  EXPECT_AUDIT_CLEAN();
}

// mmu_update of one L1 from every thread: each owns some entries and all share others; the
// references each entry holds follow whichever value won.
TEST_F(MmSmpRace, EntryUpdatesOfOneTable) {
  build_tree();
  ASSERT_EQ(pin(kL4, MMUEXT_PIN_L4_TABLE), 0);
  race([&](unsigned t) {
    for (unsigned i = 0; i < iterations(); ++i) {
      const unsigned own = 100 + t, shared = 300 + i % 4;
      const uint64_t target = kLooseData + (i + t) % 8;
      EXPECT_EQ(update(kL1, own, i % 3 ? rw(target) : ro(target)), 0);
      EXPECT_EQ(update(kL1, shared, i % 2 ? rw(target) : E()), 0);
      EXPECT_EQ(update(kL1, own, i % 5 ? ro(target) : rw(target), MMU_PT_UPDATE_PRESERVE_AD), 0);
    }
  });
  EXPECT_AUDIT_CLEAN();
  for (unsigned i = 100; i < 100 + kThreads; ++i) EXPECT_EQ(update(kL1, i, E()), 0);
  for (unsigned i = 300; i < 304; ++i) EXPECT_EQ(update(kL1, i, E()), 0);
  for (unsigned i = 0; i < 8; ++i) EXPECT_EQ(info(kLooseData + i).general_refs(), 1u) << i;
  EXPECT_AUDIT_CLEAN();
}

// Updates of a table while others pin and unpin it (validation and teardown under the
// updates): an update finds a validated table and is done whole, or finds none and is a
// refused plain write; none lands in a table being torn down.
TEST_F(MmSmpRace, UpdatesRaceValidationAndTeardown) {
  race([&](unsigned t) {
    for (unsigned i = 0; i < iterations(); ++i) {
      if (t == 0) {
        if (pin(kSpareL1, MMUEXT_PIN_L1_TABLE) == 0) {
          EXPECT_EQ(unpin(kSpareL1), 0);
        }
      } else {
        const unsigned index = t * 16 + i % 16;
        // A validated table: the update; else a plain write of a frame that may be a table
        // meanwhile (-EINVAL) or data. Either way the audit must hold after.
        (void)update(kSpareL1, index, i % 2 ? ro(kLooseData + t) : E());
      }
    }
  });
  EXPECT_EQ(info(kSpareL1).type_refs(), 0u);
  if (pin(kSpareL1, MMUEXT_PIN_L1_TABLE) == 0) {
    EXPECT_AUDIT_CLEAN();
    EXPECT_EQ(unpin(kSpareL1), 0);
  }
  EXPECT_AUDIT_CLEAN();
}

// The frame lock excludes: a plain counter incremented only under it comes out exact.
TEST_F(MmSmpRace, TheFrameLockExcludes) {
  build_tree();
  ASSERT_EQ(pin(kL1, MMUEXT_PIN_L1_TABLE), 0);
  uint64_t counter = 0;
  race([&](unsigned) {
    for (unsigned i = 0; i < iterations(); ++i) {
      ASSERT_TRUE(lock_table(frames_.info(kL1), PageType::L1, kGuest));
      counter = counter + 1;
      unlock_table(frames_, kL1);
    }
  });
  EXPECT_EQ(counter, uint64_t{kThreads} * iterations());
  RecordProperty("waits", std::to_string(waits.load()));
  EXPECT_EQ(info(kL1).type_refs(), 1u) << "each lock's type reference given back";
  EXPECT_AUDIT_CLEAN();
}

// A lock's type reference keeps the table validated: an unpin while it is held leaves the
// teardown to the unlock.
TEST_F(MmSmpRace, TheLastUnlockTearsTheTableDown) {
  build_tree();
  ASSERT_EQ(pin(kL1, MMUEXT_PIN_L1_TABLE), 0);
  ASSERT_TRUE(lock_table(frames_.info(kL1), PageType::L1, kGuest));
  ASSERT_EQ(unpin(kL1), 0);
  EXPECT_TRUE(info(kL1).validated()) << "the lock's reference holds it";
  EXPECT_EQ(info(kData).general_refs(), 2u);
  unlock_table(frames_, kL1);
  EXPECT_FALSE(info(kL1).validated());
  EXPECT_EQ(info(kData).general_refs(), 1u);
  EXPECT_AUDIT_CLEAN();
}

// Two frame locks at once on one CPU is against the order (mm/mm_locks.h): the checker says so.
TEST_F(MmSmpRace, TwoFrameLocksAtOnceAreAnOrderViolation) {
  build_tree();
  ASSERT_EQ(pin(kL2, MMUEXT_PIN_L2_TABLE), 0);
  ASSERT_TRUE(lock_table(frames_.info(kL2), PageType::L2, kGuest));
  ASSERT_TRUE(lock_table(frames_.info(kL1), PageType::L1, kGuest));
  EXPECT_EQ(lock_order_violations.load(), 1u);
  unlock_table(frames_, kL1);
  unlock_table(frames_, kL2);
  lock_order_violations = 0;
  held_locks = lock_order::HeldLocks{};
  EXPECT_EQ(unpin(kL2), 0);
}

// A second frame lock taken by a try (mmu_update's HeldTables) cannot wait, so it is no
// violation; a try on a table another holder has locked fails at once, without waiting.
TEST_F(MmSmpRace, ASecondFrameLockByATryIsNoViolation) {
  build_tree();
  ASSERT_EQ(pin(kL2, MMUEXT_PIN_L2_TABLE), 0);
  ASSERT_TRUE(lock_table(frames_.info(kL1), PageType::L1, kGuest));
  EXPECT_EQ(try_lock_any_table(frames_.info(kL2), kGuest), PageType::L2);
  EXPECT_EQ(lock_order_violations.load(), 0u);
  std::thread other(
      [&] { EXPECT_EQ(try_lock_any_table(frames_.info(kL1), kGuest), PageType::None) << "held by the test's thread"; });
  other.join();
  EXPECT_EQ(try_lock_any_table(frames_.info(kData), kGuest), PageType::None) << "no table";
  unlock_table(frames_, kL2);
  unlock_table(frames_, kL1);
  EXPECT_EQ(lock_order_violations.load(), 0u);
  EXPECT_EQ(unpin(kL2), 0);
  EXPECT_AUDIT_CLEAN();
}

// Batches that alternate two L1s, as forks do, on every thread at once, half of them in the
// opposite order: each holds one table's lock and tries the other's, which another thread
// holds, so they give theirs back and wait; no deadlock, every reference accounted for.
TEST_F(MmSmpRace, BatchesAlternatingTwoTablesInOppositeOrders) {
  build_tree();
  ASSERT_EQ(pin(kL4, MMUEXT_PIN_L4_TABLE), 0);
  ASSERT_EQ(update(kL2, 1, link(kSpareL1)), 0);
  auto slot = [](uint64_t table, unsigned index) { return (table << kPageShift) + index * 8; };
  race([&](unsigned t) {
    const uint64_t first = t % 2 ? kL1 : kSpareL1, second = t % 2 ? kSpareL1 : kL1;
    for (unsigned i = 0; i < iterations() / 8; ++i) {
      const uint64_t target = kLooseData + (i + t) % 8;
      const unsigned index = 200 + t * 8 + i % 8;
      mmu_update_t requests[] = {
          {slot(first, index), ro(target).raw()}, {slot(second, index), rw(target).raw()},
          {slot(first, index), E().raw()},        {slot(second, index), ro(target).raw()},
          {slot(first, index), rw(target).raw()}, {slot(second, index), E().raw()},
          {slot(first, index), E().raw()},
      };
      unsigned done = 0;
      auto ctx = context();
      EXPECT_EQ(mmu_update_batch(ctx, requests, 7, &done), 0);
      EXPECT_EQ(done, 7u);
    }
  });
  EXPECT_EQ(info(kL1).locked() || info(kSpareL1).locked(), false);
  for (unsigned i = 0; i < 8; ++i) EXPECT_EQ(info(kLooseData + i).general_refs(), 1u) << i;
  EXPECT_AUDIT_CLEAN();
}

// Links of one L1 added and removed from two L2s by different threads at once: the links lock
// keeps the record exact.
TEST_F(MmSmpRace, LinksOfOneTableFromTwoTables) {
  build_tree();
  ASSERT_EQ(pin(kL4, MMUEXT_PIN_L4_TABLE), 0);
  ASSERT_EQ(update(kL3, 1, link(kSpareL2)), 0);
  race([&](unsigned t) {
    const uint64_t l2 = t % 2 ? kL2 : kSpareL2;
    const unsigned slot = 20 + t;
    for (unsigned i = 0; i < iterations() / 2; ++i) {
      ASSERT_EQ(update(l2, slot, link(kSpareL1)), 0);
      ASSERT_EQ(update(l2, slot, E()), 0);
    }
  });
  EXPECT_EQ(read_links(info(kSpareL1)).count, 0u);
  EXPECT_EQ(info(kSpareL1).type_refs(), 0u);
  EXPECT_AUDIT_CLEAN();
}

// ---- the emulated write on SMP (emulate/pte_commit.h) ----

class MmSmpEmulatedWrite : public MmSmpRace {
 protected:
  static constexpr uint64_t kTableVa = 0xffff888000400000ULL;
  static constexpr unsigned kIndex = 7;
  static constexpr uint64_t kEntryVa = kTableVa + kIndex * 8;

  void SetUp() override {
    MmSmpRace::SetUp();
    build_tree();
    ASSERT_EQ(pin(kL4, MMUEXT_PIN_L4_TABLE), 0);
    ASSERT_EQ(update(kL1, kIndex, ro(kLooseData)), 0);
    frame_.rdi = kEntryVa;
    frame_.rflags = 0x202;
  }
  // xchg %rax,(%rdi) and lock cmpxchg %rcx,(%rdi), as pte_write::decode makes them.
  static pte_write::DecodedWrite xchg() {
    pte_write::DecodedWrite write;
    write.operation = pte_write::Operation::xchg;
    write.length = 3;
    write.destination.has_base = true;
    write.destination.base = emulate::RegisterOperand{emulate::Gpr::rdi, 8, false};
    write.source.kind = pte_write::SourceKind::register_;
    write.source.reg = emulate::RegisterOperand{emulate::Gpr::rax, 8, false};
    return write;
  }
  static pte_write::DecodedWrite locked_cmpxchg() {
    pte_write::DecodedWrite write = xchg();
    write.operation = pte_write::Operation::cmpxchg;
    write.length = 4;
    write.locked = true;
    write.source.reg = emulate::RegisterOperand{emulate::Gpr::rcx, 8, false};
    return write;
  }
  // The emulated write as pv/pte_emulation makes it: under the table's lock, executed on the
  // entry read, committed by emulate/pte_commit.h.
  struct Committed {
    pte_write::WriteResult result;
    int rc = 0;
  };
  Committed emulate(const pte_write::DecodedWrite& write) {
    MmuContext ctx = context();
    PageInfo& table = frames_.info(kL1);
    EXPECT_TRUE(lock_table(table, PageType::L1, kGuest));
    const E old = load_entry(frames_, kL1, kIndex);
    Committed committed{pte_write::execute(write, frame_, {}, kEntryVa, old.raw())};
    if (committed.result.status == pte_write::Status::ok && committed.result.writes) {
      const LockedTable locked{kL1, table, PagingLevel::L1};
      committed.rc = pte_write::commit(ctx, locked, kIndex, committed.result, old);
      if (committed.rc == kEntryChanged)
        committed.rc = pte_write::execute_again(ctx, locked, kIndex, write, frame_, {}, kEntryVa, committed.result);
    }
    unlock_table(frames_, kL1);
    return committed;
  }
  uint64_t* entry() { return &table_entries(frames_, kL1)[kIndex]; }
  uint64_t entry_value() { return __atomic_load_n(entry(), __ATOMIC_ACQUIRE); }

  TrapFrame frame_{};
};

// A cmpxchg whose comparand no longer matches (the hardware set Accessed since the guest read
// the entry) fails as the hardware's would: nothing written, ZF clear, the value found in rax.
TEST_F(MmSmpEmulatedWrite, ACmpxchgThatFindsAnotherValueFailsAndReportsIt) {
  const uint64_t seen_by_guest = entry_value() & ~E::kAccessed;
  __atomic_or_fetch(entry(), E::kAccessed, __ATOMIC_RELAXED);  // another CPU's walk
  const uint64_t found = entry_value();
  frame_.rax = seen_by_guest;
  frame_.rcx = ro(kLooseData + 1).raw();
  auto before = snapshot();
  const Committed committed = emulate(locked_cmpxchg());
  ASSERT_EQ(committed.result.status, pte_write::Status::ok);
  EXPECT_EQ(committed.rc, 0);
  EXPECT_FALSE(committed.result.writes);
  ASSERT_TRUE(committed.result.register_write.present);
  EXPECT_EQ(committed.result.register_write.value, found);
  EXPECT_EQ(committed.result.rflags & emulate::rflags::zero, 0u);
  EXPECT_EQ(entry_value(), found);
  EXPECT_COUNTS_UNCHANGED(before);
  // With the value found as comparand it succeeds, ZF set.
  frame_.rax = found;
  const Committed second = emulate(locked_cmpxchg());
  EXPECT_EQ(second.rc, 0);
  EXPECT_TRUE(second.result.writes);
  EXPECT_NE(second.result.rflags & emulate::rflags::zero, 0u);
  EXPECT_EQ(E(entry_value()).mfn(), kLooseData + 1);
  EXPECT_AUDIT_CLEAN();
}

// The exact store refuses an entry that changed since it was read, and leaves every count.
TEST_F(MmSmpEmulatedWrite, AnExactStoreOfAChangedEntryDoesNothing) {
  MmuContext ctx = context();
  PageInfo& table = frames_.info(kL1);
  const E read_before(entry_value() & ~(E::kAccessed | E::kDirty));
  __atomic_or_fetch(entry(), E::kDirty, __ATOMIC_RELAXED);
  auto before = snapshot();
  ASSERT_TRUE(lock_table(table, PageType::L1, kGuest));
  EXPECT_EQ(update_locked_table_entry_inline<true>(ctx, LockedTable{kL1, table, PagingLevel::L1}, kIndex,
                                                   rw(kLooseData + 2), false, read_before),
            kEntryChanged);
  unlock_table(frames_, kL1);
  EXPECT_COUNTS_UNCHANGED(before);
  EXPECT_TRUE(E(entry_value()).dirty());
  EXPECT_AUDIT_CLEAN();
}

// The emulated xchg (Linux's ptep_get_and_clear) against a "hardware" thread setting Dirty in
// the entry it replaces: every Dirty bit set is seen, by an xchg's old value or in the entry at
// the end. A result computed from a stale read would lose some.
TEST_F(MmSmpEmulatedWrite, AnXchgNeverLosesADirtyBitAnotherCpuSet) {
  std::atomic<bool> done{false};
  std::atomic<unsigned> set_by_hardware{0};
  unsigned seen = 0;
  std::thread hardware([&] {
    while (!done.load()) {
      uint64_t value = __atomic_load_n(entry(), __ATOMIC_RELAXED);
      if ((value & E::kPresent) && !(value & E::kDirty) &&
          __atomic_compare_exchange_n(entry(), &value, value | E::kDirty | E::kAccessed, false, __ATOMIC_ACQ_REL,
                                      __ATOMIC_RELAXED))
        set_by_hardware.fetch_add(1);
      std::this_thread::yield();
    }
  });
  // At least the iterations, and until the other thread has had its turn a few times.
  for (unsigned i = 0; i < iterations() || set_by_hardware.load() < 3; ++i) {
    frame_.rax = ro(kLooseData + i % 4).raw();
    const Committed committed = emulate(xchg());
    ASSERT_EQ(committed.rc, 0);
    ASSERT_TRUE(committed.result.register_write.present);
    if (committed.result.register_write.value & E::kDirty) ++seen;
  }
  done = true;
  hardware.join();
  const unsigned left = (entry_value() & E::kDirty) ? 1 : 0;
  EXPECT_EQ(set_by_hardware.load(), seen + left);
  EXPECT_GT(set_by_hardware.load(), 0u);
  EXPECT_AUDIT_CLEAN();
}

// mmu_update's stores against the same "hardware": a PRESERVE_AD update keeps the bits set
// between the read and the store, and the counts stay exact whatever the interleaving.
TEST_F(MmSmpEmulatedWrite, PreservedAccessedAndDirtyBitsSurviveUpdates) {
  std::atomic<bool> done{false};
  std::atomic<unsigned> sets{0};
  std::thread hardware([&] {
    while (!done.load()) {
      __atomic_or_fetch(entry(), E::kAccessed | E::kDirty, __ATOMIC_RELAXED);
      sets.fetch_add(1);
      std::this_thread::yield();
    }
  });
  while (sets.load() == 0) std::this_thread::yield();
  for (unsigned i = 0; i < iterations(); ++i) {
    ASSERT_EQ(update(kL1, kIndex, ro(kLooseData + i % 2), MMU_PT_UPDATE_PRESERVE_AD), 0);
    ASSERT_EQ(E(entry_value()).mfn(), kLooseData + i % 2);
  }
  done = true;
  hardware.join();
  EXPECT_TRUE(E(entry_value()).dirty()) << "set by the hardware, never cleared by a preserving update";
  EXPECT_AUDIT_CLEAN();
}

}  // namespace
}  // namespace mm::testing
