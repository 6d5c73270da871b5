// The fuzzer's own check of its address space, independent of the hypervisor's audit: after
// the hypervisor has reattached everything (settle), the kernel L4 must link only the kernel's
// slot and the fuzz slots, every table it links must be one of our frames, no superpage may
// exist, no address may reach a page-table frame of this tree (or the L4) writable, and a
// domU's entries may map only its own frames (and its shared info page).
//
// The walk reads the tree as the CPU does since read-only linear page tables are allowed
// (xen/mm/linear_tables.h): an L4 entry naming a pinned L4 makes the CPU read that L4 as an
// L3, its hypervisor slots as L3 entries, and its L2 entries as leaves that map L1 tables.
// So a leaf counts as writable only if every entry on its path is (a linear entry never is),
// and a table read below level 4 whose slots 256-271 are the kernel L4's, entry for entry (the
// M2P slot may be empty), is an L4 seen through a linear entry: those slots are skipped there.
#include "arch/xen.h"
#include "kernel/console/console.h"
#include "fuzz/fuzz_internal.h"
#include "kernel/memory/page_allocator.h"
#include "fuzz/generator/fuzz_entries.h"
#include "pv-kernel-patches/pv_ops.h"

namespace kernel::fuzz {
namespace {

using namespace lib::fuzz;

// A set of frame numbers (open addressing; the trees hold a few hundred tables at most), in
// memory the campaign maps (Campaign::work).
class FrameSet {
 public:
  static constexpr unsigned kSize = 1024;
  static constexpr uint64_t kBytes = kSize * (sizeof(uint64_t) + 1);
  void attach(uint8_t* memory) {
    frames_ = reinterpret_cast<uint64_t*>(memory);
    used_ = memory + kSize * sizeof(uint64_t);
  }
  bool insert(uint64_t mfn) {
    for (unsigned probe = 0; probe < kSize; ++probe) {
      unsigned slot = unsigned((mfn * 0x9e3779b97f4a7c15ull >> 54) + probe) & (kSize - 1);
      if (used_[slot] && frames_[slot] == mfn) return false;
      if (!used_[slot]) {
        used_[slot] = 1;
        frames_[slot] = mfn;
        return true;
      }
    }
    return false;  // full: treated as seen
  }
  bool contains(uint64_t mfn) const {
    for (unsigned probe = 0; probe < kSize; ++probe) {
      unsigned slot = unsigned((mfn * 0x9e3779b97f4a7c15ull >> 54) + probe) & (kSize - 1);
      if (!used_[slot]) return false;
      if (frames_[slot] == mfn) return true;
    }
    return false;
  }
  void clear() {
    for (unsigned i = 0; i < kSize; ++i) used_[i] = 0;
  }

 private:
  uint64_t* frames_ = nullptr;
  uint8_t* used_ = nullptr;
};

FrameSet tables, visited;

struct Checker {
  Campaign& c;
  uint64_t op;
  uint64_t violations = 0;

  bool own(uint64_t mfn) const {
    if (mfn == c.shared_info_mfn) return true;
    if (is_own_frame(c.pool, mfn)) return true;
    if (c.own_runs_complete || mfn >= c.pool.max_ram_page) return false;
    uint64_t pfn = machine_to_phys_mapping[mfn];
    return pfn < c.nr_pages && boot_info.p2m[pfn] == mfn;
  }
  void report(const char* what, uint64_t table, unsigned index, uint64_t entry) {
    ++violations;
    if (c.stats.oracle_violations + violations <= 20)
      print("fuzz: oracle after op %lu: %s (table mfn %lx slot %u = %lx)\n", op, what, table, index, entry);
  }
  bool holds_hypervisor_slots(volatile uint64_t* entries) const {
    auto* kernel_l4 = reinterpret_cast<volatile uint64_t*>(c.kernel_l4_va);
    for (unsigned index = kFirstHypervisorSlot; index <= kLastHypervisorSlot; ++index) {
      uint64_t entry = entries[index];
      // The read-only M2P slot is cleared in an L4 installed as a user base (m2p_strict).
      bool m2p_hidden = index == kFirstHypervisorSlot && entry == 0;
      // The CPU sets accessed and dirty bits in the L4 it walks: the kernel L4's are set once
      // some vCPU reached the M2P through it, a clone's only if one ran on it.
      constexpr uint64_t kHardwareBits = (1u << 5) | (1u << 6);
      if (((entry ^ kernel_l4[index]) & ~kHardwareBits) != 0 && !m2p_hidden) return false;
    }
    return true;
  }
  // Pass 1 collects the tables (and checks links); pass 2 checks the leaves against them. A
  // frame is walked once per (level, writable path): a linear entry reaches a table at a level
  // below its own, read-only, and that visit must not hide the walk of its real level.
  void walk(uint64_t mfn, int level, bool leaves, bool writable_path) {
    if (!visited.insert(mfn << 3 | uint64_t(level) << 1 | (writable_path ? 1 : 0))) return;
    uint64_t va = readable_va(c, mfn);
    if (!va) return;  // a scratch table whose direct-map address the fuzzer moved: not readable now
    auto* entries = reinterpret_cast<volatile uint64_t*>(va);
    bool linear_l4 = level < 4 && holds_hypervisor_slots(entries);
    for (unsigned index = 0; index < 512; ++index) {
      if (level == 4 && index >= kFirstHypervisorSlot && index <= kLastHypervisorSlot) continue;
      uint64_t entry = entries[index];
      if (!(entry & kPresentBit)) continue;
      if (level < 4 && linear_l4 && index >= kFirstHypervisorSlot && index <= kLastHypervisorSlot) continue;
      bool writable = writable_path && (entry & kWritableBit);
      uint64_t target = (entry & kAddressBits) >> 12;
      if (level == 4 && index != kKernelL4Slot && index != kFuzzL4Slots[0] && index != kFuzzL4Slots[1] && !leaves)
        report("a kernel L4 slot outside the kernel's and the fuzz slots is linked", mfn, index, entry);
      if (level > 1) {
        if (entry & kLargeBit) {
          if (!leaves) report("a superpage was accepted", mfn, index, entry);
          continue;
        }
        if (!own(target)) {
          if (!leaves) report("a table links a frame that is not ours", mfn, index, entry);
          continue;
        }
        if (!leaves) tables.insert(target);
        walk(target, level - 1, leaves, writable);
        continue;
      }
      if (!leaves) continue;
      if (writable && (tables.contains(target) || target == c.pool.kernel_l4_mfn))
        report("a page table is mapped writable", mfn, index, entry);
      if (!c.pool.privileged && !own(target)) report("a frame that is not ours is mapped", mfn, index, entry);
    }
  }
};

// The kernel's own tables as they were when the campaign started: every entry but the slots
// the fuzzer owns (the fuzz slots of the L4, the direct-map slots of scratch frames) and the
// hypervisor's L4 slots. Checked a few hundred entries after every operation, all at audits.
// The snapshots are frames from the allocator, taken when a campaign starts: every kernel
// image carries this code, and 200 KiB more of it in .bss would move the kernel's own layout.
constexpr unsigned kMaxKernelTables = 48;
struct KernelTable {
  volatile uint64_t* entries;
  uint64_t mfn;
  uint64_t* values;   // a frame of ours: the entries as they were
  uint64_t owned[8];  // bit per entry: the fuzzer's (not checked)
};
KernelTable kernel_tables[kMaxKernelTables];
unsigned kernel_table_count = 0;
uint64_t next_entry = 0;

void add_kernel_table(Campaign& c, uint64_t mfn) {
  if (kernel_table_count >= kMaxKernelTables) return;
  uint64_t va = readable_va(c, mfn);
  if (!va) return;
  KernelTable& table = kernel_tables[kernel_table_count++];
  table.entries = reinterpret_cast<volatile uint64_t*>(va);
  table.mfn = mfn;
  if (!table.values) table.values = pfn_pointer<uint64_t>(allocate_zeroed_frame());
  for (unsigned i = 0; i < 512; ++i) table.values[i] = table.entries[i];
  for (uint64_t& word : table.owned) word = 0;
  auto own = [&](uint64_t machine_address) {
    if (machine_address >> 12 == mfn)
      table.owned[(machine_address & 0xfff) / 8 / 64] |= 1ull << ((machine_address & 0xfff) / 8 % 64);
  };
  for (uint64_t slot : c.pool.fuzz_slot_ma) own(slot);
  for (unsigned i = 0; i < kMaxTables + kMaxData; ++i)
    if (c.direct_map_slot_va[i]) own(c.pool.direct_map_slot_ma[i]);
  if (mfn == c.pool.kernel_l4_mfn)
    for (unsigned i = kFirstHypervisorSlot; i <= kLastHypervisorSlot; ++i) table.owned[i / 64] |= 1ull << (i % 64);
}

bool check_entry(Campaign& c, KernelTable& table, unsigned index, uint64_t op) {
  if ((table.owned[index / 64] >> (index % 64)) & 1) return true;
  uint64_t now = table.entries[index];
  constexpr uint64_t kHardwareBits = kAccessedBit | kDirtyBit;
  if ((now & ~kHardwareBits) == (table.values[index] & ~kHardwareBits)) return true;
  if (c.stats.protected_changes++ < 20)
    print("fuzz: op %lu changed the kernel's table mfn %lx slot %u: %lx -> %lx\n", op, table.mfn, index,
          table.values[index], now);
  pv::ops.raw_mmu_update(table.mfn * 4096 + index * 8, table.values[index]);  // so the campaign can go on
  settle();
  return false;
}

}  // namespace

void snapshot_kernel_tables(Campaign& c) {
  kernel_table_count = 0;
  uint64_t l4 = c.pool.kernel_l4_mfn;
  add_kernel_table(c, l4);
  auto* l4_entries = reinterpret_cast<volatile uint64_t*>(c.kernel_l4_va);
  uint64_t l3 = (l4_entries[kKernelL4Slot] & kAddressBits) >> 12;
  add_kernel_table(c, l3);
  auto* l3_entries = reinterpret_cast<volatile uint64_t*>(readable_va(c, l3));
  for (unsigned i3 = 0; i3 < 512; ++i3) {
    if (!(l3_entries[i3] & 1)) continue;
    uint64_t l2 = (l3_entries[i3] & kAddressBits) >> 12;
    add_kernel_table(c, l2);
    auto* l2_entries = reinterpret_cast<volatile uint64_t*>(readable_va(c, l2));
    for (unsigned i2 = 0; l2_entries && i2 < 512; ++i2)
      if ((l2_entries[i2] & 1) && !(l2_entries[i2] & kLargeBit))
        add_kernel_table(c, (l2_entries[i2] & kAddressBits) >> 12);
  }
  print("fuzz: watching %u of the kernel's page tables (%u entries)\n", kernel_table_count, kernel_table_count * 512);
}

uint64_t check_kernel_tables(Campaign& c, uint64_t op, unsigned count) {
  uint64_t total = uint64_t(kernel_table_count) * 512, changed = 0;
  if (total == 0) return 0;
  if (count > total) count = unsigned(total);
  for (unsigned i = 0; i < count; ++i) {
    uint64_t entry = next_entry++ % total;
    if (!check_entry(c, kernel_tables[entry / 512], unsigned(entry % 512), op)) ++changed;
  }
  return changed;
}

uint64_t check_tables(Campaign& c, uint64_t op) {
  settle();
  tables.attach(c.work);
  visited.attach(c.work + FrameSet::kBytes);
  Checker checker{c, op};
  tables.clear();
  visited.clear();
  tables.insert(c.pool.kernel_l4_mfn);
  checker.walk(c.pool.kernel_l4_mfn, 4, false, true);
  visited.clear();
  checker.walk(c.pool.kernel_l4_mfn, 4, true, true);
  c.stats.oracle_violations += checker.violations;
  return checker.violations;
}

}  // namespace kernel::fuzz
