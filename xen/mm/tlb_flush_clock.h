#pragma once
#include "abi/xen_abi.h"
#include "arch/x86/cpu/cpu_mask.h"
#include "arch/x86/layout.h"
#include "mm/tlb_flush_filter.h"

namespace mm {

// Xen's tlbflush_clock for the CPUs that run guests, each with the tick of its last full flush.
// A frame whose type count drops is stamped with now(): translations of its old use (a writable
// mapping, a page-table walk through it) may be in a TLB from then on, until that CPU's next
// full flush. Every full flush (a CR3 load: PGE is off and there are no PCIDs, so nothing
// survives it) ticks the clock first and records the tick as the CPU's after the flush
// (tick(), the flush, flushed()), so a CPU's tick later than a stamp names a flush that began
// after the stamp was read. When the frame later takes a different type, only the CPUs that
// have not flushed since its stamp may still hold something (cpus_holding, by the same rule as
// tlb_flush_filter.h), which is most often none: a fork's new tables were last used by an
// exited child's address space, torn down and switched away from long before.
//
// 64 bits: at one tick per hardware instruction it would not wrap in a century, so stamps are
// compared as plain numbers here (tlb_flush_filter.h's comparison is the same below 2^63).
// Every member is read and written atomically: any CPU stamps, ticks and asks.
class TlbFlushClock {
 public:
  static constexpr unsigned kCpus = MAX_CPUS;

  // The stamp of a frame whose translations may now be stale.
  uint64_t now() const { return __atomic_load_n(&now_, __ATOMIC_ACQUIRE); }
  // A full flush of the TLB of `cpu` is about to begin: the clock's new value, for flushed().
  uint64_t tick() { return __atomic_add_fetch(&now_, 1, __ATOMIC_ACQ_REL); }
  // That flush has been made: every translation `cpu` held before `tick` is gone.
  void flushed(unsigned cpu, uint64_t tick) {
    if (cpu >= kCpus) return;
    __atomic_store_n(&last_flush_[cpu], tick, __ATOMIC_RELEASE);
    if (!CpuMask::from_bits(__atomic_load_n(&users_, __ATOMIC_RELAXED)).contains(cpu))
      __atomic_fetch_or(&users_, CpuMask::only(cpu).bits(), __ATOMIC_ACQ_REL);
  }
  // Both, where nothing can run in between (one CPU; the unit tests).
  void full_flush(unsigned cpu = 0) { flushed(cpu, tick()); }

  // Whether translations stamped `stamp` may still be in the TLB of a CPU that runs guests. Frames start with stamp 0,
  // before any tick: nothing of theirs is in any TLB.
  bool may_hold(uint64_t stamp) const { return !cpus_holding(stamp, CpuMask::first(kCpus)).empty(); }
  // The CPUs of `among` that may still hold them: those that run guests and have not flushed
  // since `stamp`.
  CpuMask cpus_holding(uint64_t stamp, CpuMask among) const {
    CpuMask holding;
    if (stamp == 0) return holding;
    for_each_cpu(among & CpuMask::from_bits(__atomic_load_n(&users_, __ATOMIC_ACQUIRE)), [&](unsigned cpu) {
      if (cpu < kCpus && __atomic_load_n(&last_flush_[cpu], __ATOMIC_ACQUIRE) <= stamp) holding.add(cpu);
    });
    return holding;
  }

 private:
  uint64_t now_ = 1;
  uint64_t last_flush_[kCpus] = {};
  // CpuMask bits: the CPUs that run guests: the boot CPU from the start, any other from its
  // first flush on this clock.
  uint64_t users_ = 1;
};

}  // namespace mm
