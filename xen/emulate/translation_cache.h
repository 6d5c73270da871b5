// The translations of the last few emulated page-table writes (KVM's mmio_gva / mmio_gfn
// with its generation): the page CR2 was in, in which address space, and what the software walk found
// there (the table frame written and the L1 entry that maps it). A guest writing a run of
// entries of one table faults on the same page again and again; with this the fault path
// skips the four-level walk and reads one entry instead.
//
// A cached translation is served only while nothing that could alter the walk happened:
//   - the key: the same domain, the same L4 (a CR3 load to another address space misses);
//   - the generation: FrameTable::walk_generation() (ticked by every change of an L2-L4
//     entry, every type change, pin and unpin, base pointer and LDT operation, ptwr mode
//     switch);
//   - the final L1 entry, read again at its machine address and compared (without A/D): an
//     L1 changes without the generation ticking (mmu_update on it, an emulated write, or a
//     direct store while the writable-pagetable path has it detached), so its value is
//     checked instead of trusted.
// What the translation leads to (the written frame's type and owner) is checked by the
// caller every time, as after a walk: the cache replaces the walk, nothing else.
// TLB flushes and invlpg do not invalidate it: the walk it replaces is the software walk of
// the tables in memory, which no TLB state changes (a guest that takes a fault, invalidates
// and faults again, as a demand-paging storm does at every page, hits). The TLB matters only
// where a frame's old use may still be reachable through it, which the decode cache's
// protection checks with the flush clock (pte_emulation.cpp).
//
// Pure logic on the machine's memory, unit tested on the host. One instance per physical
// CPU (not locked).
#pragma once
#include <stdint.h>
#include "mm/frame_table.h"
#include "mm/machine_memory.h"
#include "mm/page_info.h"

namespace pte_emulation {

// Everything whose change invalidates cached translations, as one comparable value.
struct WalkGeneration {
  uint64_t walks = 0;  // FrameTable::walk_generation()
  constexpr bool operator==(const WalkGeneration&) const = default;

  // The generation walks of `frames` are made at now.
  static WalkGeneration of(const mm::FrameTable& frames) { return {frames.walk_generation()}; }
};

struct TranslationKey {
  uint16_t domain = 0;
  uint64_t l4_mfn = 0;
  uint64_t page = 0;  // the faulting virtual address >> 12
  constexpr bool operator==(const TranslationKey&) const = default;
};

// What the walk of the key's page found.
struct Translation {
  uint64_t target_mfn = 0;           // the frame the page maps
  uint64_t mapping_entry_maddr = 0;  // machine address of the L1 entry that maps it
  // The frame's frame-table entry (null outside the table), so a hit skips looking it up; what
  // it says is the caller's to check every time (the emulated write locks it: not const).
  mm::PageInfo* target = nullptr;
};

// Where a walk ended (the L1 entry that maps the page) and under which generation: still what
// a walk would find while the generation stands and that entry reads the same (A/D aside).
// Shared by the translation cache and the decode cache's write-protected slots.
class WalkStamp {
 public:
  // Reads the entry at `mapping_entry_maddr` now; false (and nothing kept) outside memory.
  bool take(WalkGeneration now, uint64_t mapping_entry_maddr, const mm::MachineMemory& memory) {
    valid_ = memory.contains(mapping_entry_maddr >> mm::kPageShift);
    if (!valid_) return false;
    generation_ = now;
    maddr_ = mapping_entry_maddr;
    entry_ = walk_relevant(read(memory));
    return true;
  }
  bool holds(WalkGeneration now, const mm::MachineMemory& memory) const {
    return valid_ && generation_ == now && walk_relevant(read(memory)) == entry_;
  }
  void clear() { valid_ = false; }
  uint64_t mapping_entry_maddr() const { return maddr_; }

 private:
  // Accessed and dirty are set by the hardware and do not change what the walk finds.
  static constexpr uint64_t kHardwareSetBits = 0x20 | 0x40;
  static constexpr uint64_t walk_relevant(uint64_t entry) { return entry & ~kHardwareSetBits; }
  uint64_t read(const mm::MachineMemory& memory) const {
    return *reinterpret_cast<const volatile uint64_t*>(memory.frame(maddr_ >> mm::kPageShift) +
                                                       (maddr_ & (mm::kPageBytes - 8)));
  }

  bool valid_ = false;
  WalkGeneration generation_{};
  uint64_t maddr_ = 0;
  uint64_t entry_ = 0;
};

// A few translations, each with its own stamp: a fork writes two tables in turn (the child's
// new entry, then the parent's entry write-protected), which one entry would miss on every
// write. A key is held by one entry at most; a new key replaces the entries in turn.
class TranslationCache {
 public:
  static constexpr unsigned kEntries = 4;

  // The cached translation of `key` if it is still what a walk would find, else null.
  const Translation* find(const TranslationKey& key, WalkGeneration now, const mm::MachineMemory& memory) const {
    for (const Entry& entry : entries_)
      if (entry.key == key) return entry.stamp.holds(now, memory) ? &entry.translation : nullptr;
    return nullptr;
  }
  // Remembers what a walk just found (the L1 entry is read now, after the walk).
  void remember(const TranslationKey& key, WalkGeneration now, const Translation& translation,
                const mm::MachineMemory& memory) {
    Entry& entry = entry_for(key);
    if (!entry.stamp.take(now, translation.mapping_entry_maddr, memory)) return;
    entry.key = key;
    entry.translation = translation;
  }
  void clear() {
    for (Entry& entry : entries_) entry.stamp.clear();
  }

 private:
  struct Entry {
    TranslationKey key{};
    Translation translation{};
    WalkStamp stamp{};
  };
  // The entry holding `key`, else the next one in turn (a failed take leaves it invalid).
  Entry& entry_for(const TranslationKey& key) {
    for (Entry& entry : entries_)
      if (entry.key == key) return entry;
    Entry& replaced = entries_[next_];
    next_ = (next_ + 1) % kEntries;
    return replaced;
  }

  Entry entries_[kEntries]{};
  unsigned next_ = 0;
};

}  // namespace pte_emulation
