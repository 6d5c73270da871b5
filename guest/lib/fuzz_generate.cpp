// Generation of the fuzzer's operations (lib/fuzz_model.h). Every operation is drawn from
// Random::for_operation(seed, op); the rules that keep the fuzzer alive are applied here and
// checked again by check_rules (lib/fuzz_rules.cpp).
#define __XEN_TOOLS__ 1  // sysctl.h is the tools' interface
#include <stddef.h>
#include <stdint.h>
#include <xen/xen.h>
#include <xen/callback.h>
#include <xen/event_channel.h>
#include <xen/memory.h>
#include <xen/nmi.h>
#include <xen/physdev.h>
#include <xen/sched.h>
#include <xen/sysctl.h>
#include <xen/vcpu.h>
#include <xen/version.h>

#include "lib/fuzz_entries.h"
#include "lib/fuzz_model.h"

namespace lib::fuzz {
namespace {

constexpr uint64_t kPage = 4096;
constexpr uint64_t kHypervisorStart = 0xffff800000000000ull;
constexpr uint64_t kHypervisorEnd = 0xffff880000000000ull;  // exclusive
constexpr uint16_t kFlatKernelCs = 0xe033, kFlatKernelSs = 0xe02b, kFlatUserCs32 = 0xe023;

// Frames that are not RAM (or not in the frame table): devices the hypervisor must keep.
constexpr uint64_t kIoFrames[] = {0xfee00, 0xfec00, 0xfed00, 0xa0, 0xb8, 0xc0, 0xf0, 0xfffff, 0xe0000, 0xfebf0};

class Generator {
 public:
  Generator(const Pool& pool, const Options& options, uint64_t op)
      : pool_(pool), options_(options), random_(Random::for_operation(options.seed, op)) {}

  void run(Op& op);
  void finish();

 private:
  // ---- buffers -------------------------------------------------------------------------
  // `bytes` of the operation's buffer (8-aligned), or null when it is full.
  uint8_t* take(uint64_t bytes, uint64_t& va) {
    uint64_t start = (used_ + 7) & ~7ull;
    if (start + bytes > pool_.buffer_size) return nullptr;
    used_ = start + bytes;
    va = pool_.buffer_va + start;
    return pool_.buffer + start;
  }
  void fill_random(uint8_t* at, uint64_t bytes) {
    for (uint64_t i = 0; i < bytes; i += 8) {
      uint64_t word = random_.next();
      for (uint64_t b = 0; b < 8 && i + b < bytes; ++b) at[i + b] = uint8_t(word >> (8 * b));
    }
  }
  // Room at the end of the edge page for `bytes` (at most a page): they start so that only
  // the first bytes - skew are mapped and the rest falls into the unmapped page after it. The
  // caller writes all `bytes` into the staging area returned; finish() copies the mapped part.
  // One user per operation (null after that).
  uint8_t* edge_tail(uint64_t bytes, uint64_t skew, uint64_t& va) {
    if (edge_used_ || bytes == 0) return nullptr;
    if (bytes > kPage) bytes = kPage;
    if (skew >= bytes) skew = bytes - 1;
    edge_used_ = true;
    edge_mapped_ = bytes - skew;
    va = pool_.edge_va + kPage - edge_mapped_;
    for (uint64_t i = 0; i < bytes; ++i) staging_[i] = 0;
    return staging_;
  }
  void copy_edge() {
    if (!edge_used_) return;
    for (uint64_t i = 0; i < edge_mapped_; ++i) pool_.edge[kPage - edge_mapped_ + i] = staging_[i];
  }

  // ---- addresses -----------------------------------------------------------------------
  bool on(Feature feature) const { return options_.enabled(feature); }
  uint64_t non_canonical() {
    static const uint64_t kValues[] = {0x0000800000000000ull, 0x8000000000000000ull, 0x7fffffffffffffffull,
                                       0xfffe000000000000ull, 0x00007ffffffff000ull + 0x1000};
    return random_.coin() ? random_.pick(kValues) : ((random_.next() & 0x7fff000000000000ull) | 0x0000800000000000ull) ^ random_.bits(47);
  }
  uint64_t hypervisor_va() {
    switch (random_.below(4)) {
      case 0: return kHypervisorStart + random_.bits(22) * 8;  // the read-only M2P
      case 1: return kHypervisorStart + (random_.below(16) << 39) + random_.bits(39);
      case 2: return kHypervisorEnd - 8 + random_.below(16);
      default: return kHypervisorStart - random_.below(4) * kPage;  // just below it
    }
  }
  // Where nothing is readable (or not for the guest): the hypervisor is asked to fail.
  uint64_t unreadable_va() {
    switch (random_.below(on(kHypervisorPointers) ? 7 : 6)) {
      case 0: return 0;
      case 1: return random_.below(kPage * 16);
      case 2: return pool_.unmapped_va + random_.below(kPage);
      case 3: return pool_.edge_va + kPage + random_.below(kPage);
      case 4: return non_canonical();
      case 5: return random_.between(0x1000, 0x00007fffffffffffull);  // user half: not in the kernel's tables
      default: return hypervisor_va();
    }
  }
  // Where update_va_mapping must fail for want of tables (not the edge page's hole, which
  // has an L1: mapping something there would end the reads it is meant to stop).
  uint64_t untabled_va() {
    switch (random_.below(on(kHypervisorPointers) ? 6 : 5)) {
      case 0: return random_.below(kPage * 16);
      case 1: return pool_.unmapped_va + random_.below(kPage);
      case 2: return non_canonical();
      case 3: return random_.between(0x1000, 0x00007fffffffffffull);
      case 4: return 0xffff000000000000ull | (random_.between(272, 299) << 39) | random_.bits(39);
      default: return hypervisor_va();
    }
  }
  // An address in the fuzzed range (the kernel L4's fuzz slots), biased to where the initial
  // tables map something.
  uint64_t fuzz_va() {
    uint64_t slot = kFuzzL4Slots[random_.below(kFuzzSlotCount)];
    uint64_t l3 = random_.percent(70) ? random_.below(2) : random_.below(512);
    uint64_t l2 = random_.percent(70) ? random_.below(4) : random_.below(512);
    uint64_t l1 = random_.percent(70) ? random_.below(16) : random_.below(512);
    uint64_t va = (slot << 39) | (l3 << 30) | (l2 << 21) | (l1 << 12);
    va |= 0xffff000000000000ull;  // the fuzz slots are in the upper half
    return va + (random_.percent(80) ? random_.below(kPage / 8) * 8 : random_.below(kPage));
  }
  // A pointer the hypervisor may write `bytes` through: a fresh part of the buffer (filled
  // with random bytes, since some calls read before they write), the edge, or somewhere it
  // must refuse. Never the kernel's memory, never the fuzzed range.
  uint64_t write_pointer(uint64_t bytes) {
    unsigned choice = unsigned(random_.below(100));
    uint64_t va = 0;
    if (choice < 70) {
      if (uint8_t* at = take(bytes, va)) {
        fill_random(at, bytes);
        return va;
      }
    }
    if (choice < 82 && bytes <= kPage) {
      if (uint8_t* at = edge_tail(bytes, random_.below(bytes), va)) {
        fill_random(at, bytes);
        return va;
      }
    }
    if (choice < 88 && pool_.table_count) return pool_.table_va[random_.below(pool_.table_count)] + random_.below(kPage / 8) * 8;
    if (choice < 91) return pool_.read_only_va + random_.below(kPage / 8) * 8;
    return unreadable_va();
  }
  // A pointer the hypervisor only reads, where the content does not matter to the fuzzer's
  // safety (console text, vCPU masks, trap tables that are replaced afterwards).
  uint64_t read_pointer(uint64_t bytes) {
    switch (random_.below(10)) {
      case 0: return pool_.kernel_image_va + random_.below(pool_.kernel_image_size > bytes ? pool_.kernel_image_size - bytes : 1);
      case 1: return pool_.stack_va + random_.below(kPage);
      case 2:
        if (on(kFuzzAreaPointers)) return fuzz_va();
        [[fallthrough]];
      case 3: return pool_.text_va + random_.below(pool_.text_size);
      case 4: return unreadable_va();
      default: return write_pointer(bytes);
    }
  }

  // ---- frames and entries --------------------------------------------------------------
  uint64_t scratch_table(unsigned& index) {
    index = unsigned(random_.below(pool_.table_count));
    return pool_.table_mfn[index];
  }
  // A table of the given intended level, or any table if there is none.
  unsigned table_of_level(unsigned level) {
    unsigned candidates[kMaxTables];
    unsigned count = 0;
    for (unsigned i = 0; i < pool_.table_count; ++i)
      if (pool_.table_level[i] == level) candidates[count++] = i;
    return count ? candidates[random_.below(count)] : unsigned(random_.below(pool_.table_count));
  }
  unsigned non_clone_table() {
    if (pool_.table_count <= pool_.clone_count) return pool_.table_count;  // none
    return pool_.clone_count + unsigned(random_.below(pool_.table_count - pool_.clone_count));
  }
  uint64_t data_frame() { return pool_.data_mfn[random_.below(pool_.data_count)]; }
  uint64_t protected_frame(uint8_t* level = nullptr) {
    if (!pool_.protected_frame_count) return pool_.kernel_l4_mfn;
    const OtherFrame& frame = pool_.protected_frames[random_.below(pool_.protected_frame_count)];
    if (level) *level = frame.level;
    return frame.mfn;
  }
  uint64_t hypervisor_frame() {
    if (!pool_.hypervisor_mfn_count || random_.one_in(4)) return random_.below(0x100);  // low memory is the hypervisor's
    return pool_.hypervisor_mfns[random_.below(pool_.hypervisor_mfn_count)];
  }
  uint64_t foreign_frame() {
    if (!pool_.foreign_mfn_count || random_.one_in(4)) return random_.below(pool_.max_ram_page ? pool_.max_ram_page : 0x20000);
    return pool_.foreign_mfns[random_.below(pool_.foreign_mfn_count)];
  }
  uint64_t io_frame() {
    if (random_.coin()) return random_.pick(kIoFrames);
    return pool_.max_ram_page + random_.below(0x200000);  // beyond RAM: I/O space for dom0
  }
  // A frame that is neither scratch nor ours (the hypervisor must refuse most uses of it).
  // Never one of ours: a request naming it may be carried out as a plain write of data.
  uint64_t not_ours_frame() {
    for (;;) {
      uint64_t mfn;
      switch (random_.below(on(kIo) ? 5 : 4)) {
        case 0: mfn = hypervisor_frame(); break;
        case 1: mfn = foreign_frame(); break;
        case 2: mfn = (random_.bits(12) | 1) << 28; break;  // address bits beyond the physical width
        case 3: mfn = random_.bits(40); break;
        default: mfn = io_frame(); break;
      }
      if (!is_own_frame(pool_, mfn)) return mfn;
    }
  }

  uint64_t leaf_flags() {
    uint64_t flags = random_.percent(92) ? kPresentBit : 0;
    if (random_.coin()) flags |= kWritableBit;
    if (random_.coin()) flags |= kUserBit;
    if (random_.coin()) flags |= kAccessedBit;
    if (random_.percent(40)) flags |= kDirtyBit;
    if (random_.percent(10)) flags |= kGlobalBit;
    if (random_.percent(20)) flags |= kNoExecuteBit;
    if (random_.percent(15)) flags |= random_.bits(3) << 9;    // available to software
    if (random_.percent(8)) flags |= random_.bits(11) << 52;   // available (62: Xen's grant bit)
    if (random_.percent(5)) flags |= (random_.bits(3) << 3);   // PWT, PCD
    if (random_.percent(5)) flags |= kLargeBit;                // PAT in an L1 entry
    return flags;
  }
  uint64_t table_flags() {
    uint64_t flags = kTableBits;
    if (random_.percent(8)) flags &= ~kPresentBit;
    if (random_.percent(15)) flags &= ~kWritableBit;
    if (random_.percent(10)) flags &= ~kUserBit;
    if (random_.percent(10)) flags &= ~kAccessedBit;
    if (random_.percent(8)) flags |= kLargeBit;  // a superpage
    if (random_.percent(5)) flags |= kNoExecuteBit;
    if (random_.percent(5)) flags |= kGlobalBit;
    if (random_.percent(5)) flags |= random_.bits(2) << 3;
    if (random_.percent(8)) flags |= random_.bits(3) << 9;
    if (random_.percent(4)) flags |= kDirtyBit;
    return flags;
  }

  // A value for an entry of a table of `level`: plausible (a frame of the right kind with
  // the usual flags) more often than not, hostile otherwise.
  uint64_t entry_value(unsigned level) {
    uint64_t mfn;
    if (random_.percent(4)) return 0;
    if (random_.percent(2)) return sanitize_entry(pool_, random_.next());
    unsigned choice = unsigned(random_.below(100));
    if (level <= 1) {
      if (choice < 42) mfn = data_frame();
      else if (choice < 64) { unsigned t; mfn = scratch_table(t); }
      else if (choice < 76) mfn = protected_frame();
      else mfn = not_ours_frame();
    } else {
      if (choice < 50) mfn = pool_.table_mfn[table_of_level(level - 1)];
      else if (choice < 66) { unsigned t; mfn = scratch_table(t); }
      else if (choice < 74) mfn = data_frame();
      else if (choice < 84) mfn = protected_frame();
      else mfn = not_ours_frame();
    }
    bool leaf = level <= 1;
    if (random_.percent(10)) leaf = !leaf;  // flags of the other kind
    uint64_t value = ((mfn << 12) & kAddressBits) | (leaf ? leaf_flags() : table_flags());
    if (random_.percent(6)) value |= (random_.bits(12) | 1) << 40 >> random_.below(12) << random_.below(1);  // reserved address bits
    return sanitize_entry(pool_, value);
  }

  // A slot the fuzzer may write and the level of the table it is in.
  uint64_t writable_slot(unsigned& level) {
    unsigned choice = unsigned(random_.below(100));
    if (choice < 8) {
      level = 4;
      return pool_.fuzz_slot_ma[random_.below(kFuzzSlotCount)];
    }
    if (choice < 16) {
      level = 1;
      unsigned index = unsigned(random_.below(pool_.table_count + pool_.data_count));
      if (index >= pool_.table_count) index = kMaxTables + (index - pool_.table_count);
      return pool_.direct_map_slot_ma[index];
    }
    unsigned table;
    scratch_table(table);
    level = pool_.table_level[table];
    return pool_.table_mfn[table] * kPage + table_slot_index(table, false) * 8;
  }
  // An entry index in scratch table `table` (never the kernel slot of a clone; with
  // `span` > 1, a run of that many that avoids it).
  unsigned table_slot_index(unsigned table, bool misaligned, unsigned span = 1) {
    for (;;) {
      unsigned index;
      unsigned choice = unsigned(random_.below(100));
      if (choice < 45) index = unsigned(random_.below(8));
      else if (choice < 50) index = unsigned(random_.between(16, 18));  // where the initial tree keeps its aliases
      else if (choice < 55 && pool_.table_level[table] == 4) index = kFuzzL4Slots[random_.below(kFuzzSlotCount)];
      else if (choice < 60 && pool_.table_level[table] == 4) index = unsigned(random_.between(kFirstHypervisorSlot, kLastHypervisorSlot));
      else if (choice < 66) index = 511 - unsigned(random_.below(2));
      else index = unsigned(random_.below(512));
      if (misaligned || span > 1) index = index > 512 - span - (misaligned ? 1 : 0) ? 512 - span - (misaligned ? 1 : 0) : index;
      if (table < pool_.clone_count) {
        unsigned last = index + span - 1 + (misaligned ? 1 : 0);
        if (last >= kKernelL4Slot && index <= kKernelL4Slot) continue;
      }
      return index;
    }
  }
  // The value written to a slot of the fuzzer's: by the level of the table it is in, and
  // read-only for the direct-map slots of scratch tables (their mappings must stay unwritable).
  uint64_t value_for_slot(uint64_t machine_address, unsigned level) {
    for (unsigned i = 0; i < pool_.table_count + pool_.data_count; ++i) {
      unsigned slot = i < pool_.table_count ? i : kMaxTables + (i - pool_.table_count);
      if (pool_.direct_map_slot_ma[slot] == machine_address) return direct_map_value(i);
    }
    if (random_.percent(12)) level = unsigned(random_.between(1, 4));  // the wrong level on purpose
    return entry_value(level);
  }
  // A value for the direct-map entry of scratch frame `index` (tables first, then data): mostly
  // the frame itself again (so stores through it work more often than not), else another
  // frame; never writable for a table.
  uint64_t direct_map_value(unsigned index) {
    bool table = index < pool_.table_count;
    uint64_t value;
    if (random_.percent(70)) {
      uint64_t mfn = table ? pool_.table_mfn[index] : pool_.data_mfn[index - pool_.table_count];
      value = (mfn << 12) | (leaf_flags() | kPresentBit);
      if (!table && random_.percent(70)) value |= kWritableBit;
    } else {
      value = entry_value(1);
    }
    return table ? value & ~kWritableBit : value;
  }
  // A hostile value for a protected slot: what it holds, or a change the hypervisor must refuse.
  uint64_t protected_value(const ProtectedSlot& slot) {
    bool hypervisor_slot = slot.level == 4 && ((slot.machine_address & (kPage - 1)) / 8) >= kFirstHypervisorSlot &&
                           ((slot.machine_address & (kPage - 1)) / 8) <= kLastHypervisorSlot;
    if (hypervisor_slot && on(kHypervisorSlots) && random_.coin()) return random_.coin() ? entry_value(4) : random_.next();
    switch (random_.below(4)) {
      case 0: return slot.value;
      case 1:
        if (slot.level == 1 && slot.maps_table) return slot.value | kWritableBit;
        [[fallthrough]];
      case 2: return slot.value | kPresentBit | ((random_.bits(12) | 1) << 40);  // beyond the physical width (present: a not-present entry may hold anything)
      default:
        if (slot.level > 1 && (slot.value & kPresentBit)) return slot.value | kLargeBit;
        return slot.value;
    }
  }
  const ProtectedSlot* protected_slot() {
    if (!pool_.protected_slot_count) return nullptr;
    return &pool_.protected_slots[random_.below(pool_.protected_slot_count)];
  }

  uint64_t foreign_domain() {
    if (!on(kForeign) || random_.percent(80)) return DOMID_SELF;
    static const uint64_t kDomains[] = {0, 1, 2, 7, 8, DOMID_IO, DOMID_XEN, DOMID_COW, DOMID_INVALID, DOMID_IDLE, 0x7ff5};
    switch (random_.below(5)) {
      case 0: return pool_.domid;
      case 1: return random_.bits(16);
      case 2: return random_.next();
      case 3: return DOMID_SELF | (random_.between(1, 9) << 16);  // a page-table owner (pt_dom)
      default: return random_.pick(kDomains);
    }
  }
  uint64_t batch_count(uint64_t typical_max) {
    if (random_.percent(4)) return 0;
    if (on(kHugeCounts) && random_.percent(4)) {
      static const uint64_t kHuge[] = {0x100000000ull, 0x100000001ull, 0xffffffffull, 0x8000000000000000ull, ~0ull, 0x80000000ull};
      return random_.pick(kHuge);
    }
    return random_.between(1, typical_max);
  }
  // Where a batch of `count` items of `size` bytes goes: mostly the buffer; a huge count
  // puts a few items at the end of the edge page (the hypervisor reads into the unmapped page).
  uint8_t* batch_list(uint64_t count, uint64_t size, uint64_t& va, uint64_t& written) {
    written = count;
    bool huge = count > 64;
    if ((huge || random_.percent(5)) && count * size <= kPage / 2) {
      if (huge) written = random_.between(1, 4);
      uint64_t skew = random_.percent(30) ? random_.below(size) : 0;
      if (uint8_t* at = edge_tail(written * size, skew, va)) return at;
    }
    if (huge) {  // only where the reading stops at the unmapped page, never into our buffer
      written = 0;
      va = unreadable_va();
      return nullptr;
    }
    if (uint8_t* at = take(count * size, va)) return at;
    written = 0;
    va = unreadable_va();
    return nullptr;
  }
  // Where a list cannot be read (a readable page would be read as requests, whatever it holds).
  uint64_t hostile_list_pointer() { return unreadable_va(); }

  // ---- the MMU hypercalls ----------------------------------------------------------------
  void mmu_request(uint64_t& ptr, uint64_t& val) {
    unsigned choice = unsigned(random_.below(100));
    if (choice < 76) {
      unsigned level;
      uint64_t ma = writable_slot(level);
      val = value_for_slot(ma, level);
      static const unsigned kCommandWeights[] = {80, 0, 12, 8};
      ptr = ma | random_.weighted(kCommandWeights, 4);
      if (random_.percent(2)) ptr += random_.between(1, 7) & ~3ull;  // misaligned inside the entry
      return;
    }
    if (choice < 86) {  // the M2P: our scratch frames only, or frames that are not ours
      uint64_t mfn = random_.percent(75) ? (random_.coin() ? data_frame() : pool_.table_mfn[random_.below(pool_.table_count)])
                                         : not_ours_frame();
      ptr = (mfn << 12) | MMU_MACHPHYS_UPDATE;
      val = random_.coin() ? random_.below(pool_.own_count + 16) : random_.next();
      return;
    }
    if (choice < 94) {
      if (const ProtectedSlot* slot = protected_slot()) {
        ptr = slot->machine_address | (random_.percent(80) ? MMU_NORMAL_PT_UPDATE : MMU_PT_UPDATE_PRESERVE_AD);
        val = protected_value(*slot);
        return;
      }
    }
    // Tables that are not ours to write.
    ptr = (not_ours_frame() << 12) + random_.below(512) * 8 + random_.below(4);
    val = entry_value(unsigned(random_.between(1, 4)));
  }

  void mmu_update(Call& call) {
    uint64_t count = batch_count(random_.percent(70) ? 4 : 32);
    uint64_t va = 0, written = 0;
    uint8_t* list = random_.percent(5) ? nullptr : batch_list(count, sizeof(mmu_update_t), va, written);
    if (list) {
      auto* requests = reinterpret_cast<mmu_update_t*>(list);
      for (uint64_t i = 0; i < written; ++i) mmu_request(requests[i].ptr, requests[i].val);
    } else {
      va = hostile_list_pointer();
    }
    call.number = __HYPERVISOR_mmu_update;
    call.args[0] = va;
    call.args[1] = count;
    call.args[2] = random_.percent(40) ? 0 : write_pointer(4);
    call.args[3] = foreign_domain();
  }

  // One mmuext_op; sets restore bits for what it may change.
  void mmuext_request(mmuext_op_t& op, uint32_t& restore) {
    static const unsigned kCommands[] = {MMUEXT_PIN_L1_TABLE, MMUEXT_PIN_L2_TABLE, MMUEXT_PIN_L3_TABLE, MMUEXT_PIN_L4_TABLE,
                                         MMUEXT_UNPIN_TABLE, MMUEXT_NEW_BASEPTR, MMUEXT_TLB_FLUSH_LOCAL, MMUEXT_INVLPG_LOCAL,
                                         MMUEXT_TLB_FLUSH_MULTI, MMUEXT_INVLPG_MULTI, MMUEXT_TLB_FLUSH_ALL, MMUEXT_INVLPG_ALL,
                                         MMUEXT_FLUSH_CACHE, MMUEXT_SET_LDT, 14, MMUEXT_NEW_USER_BASEPTR, MMUEXT_CLEAR_PAGE,
                                         MMUEXT_COPY_PAGE, MMUEXT_FLUSH_CACHE_GLOBAL, MMUEXT_MARK_SUPER, MMUEXT_UNMARK_SUPER,
                                         21};
    static const unsigned kWeights[] = {12, 7, 6, 6, 10, 6, 8, 6, 2, 2, 2, 2, 2, 3, 1, 8, 4, 4, 1, 2, 2, 1};
    static_assert(sizeof(kCommands) == sizeof(kWeights));
    unsigned cmd = kCommands[random_.weighted(kWeights, sizeof(kWeights) / sizeof(kWeights[0]))];
    if (random_.percent(2)) cmd = unsigned(random_.next());
    op = mmuext_op_t{};
    op.cmd = cmd;
    op.arg2.nr_ents = unsigned(random_.next());
    switch (cmd) {
      case MMUEXT_PIN_L1_TABLE: case MMUEXT_PIN_L2_TABLE: case MMUEXT_PIN_L3_TABLE: case MMUEXT_PIN_L4_TABLE: {
        unsigned level = cmd - MMUEXT_PIN_L1_TABLE + 1;
        unsigned choice = unsigned(random_.below(100));
        if (choice < 45) op.arg1.mfn = pool_.table_mfn[table_of_level(level)];
        else if (choice < 70) { unsigned t; op.arg1.mfn = scratch_table(t); }
        else if (choice < 78) op.arg1.mfn = data_frame();
        else if (choice < 88) op.arg1.mfn = protected_frame_not_of_level(level);
        else op.arg1.mfn = not_ours_frame();
        break;
      }
      case MMUEXT_UNPIN_TABLE: {
        unsigned table = non_clone_table();
        unsigned choice = unsigned(random_.below(100));
        if (choice < 80 && table < pool_.table_count) op.arg1.mfn = pool_.table_mfn[table];
        else if (choice < 88) op.arg1.mfn = data_frame();
        else op.arg1.mfn = not_ours_frame();
        break;
      }
      case MMUEXT_NEW_BASEPTR: {
        restore |= kRestoreBase;
        unsigned choice = unsigned(random_.below(100));
        if (choice < 30 || (choice < 70 && (!on(kBasePointer) || !pool_.clone_count))) op.arg1.mfn = pool_.kernel_l4_mfn;
        else if (choice < 70) op.arg1.mfn = pool_.table_mfn[random_.below(pool_.clone_count)];
        else if (choice < 85) op.arg1.mfn = protected_frame_not_of_level(4);
        else op.arg1.mfn = not_ours_frame();
        break;
      }
      case MMUEXT_NEW_USER_BASEPTR: {
        unsigned choice = unsigned(random_.below(100));
        if (choice < 15) op.arg1.mfn = 0;
        else if (choice < 65) { unsigned t; op.arg1.mfn = scratch_table(t); }
        else if (choice < 75) op.arg1.mfn = pool_.kernel_l4_mfn;
        else if (choice < 85) op.arg1.mfn = protected_frame();
        else op.arg1.mfn = not_ours_frame();
        break;
      }
      case MMUEXT_INVLPG_LOCAL: case MMUEXT_INVLPG_ALL:
        op.arg1.linear_addr = random_.percent(80) ? fuzz_va() : unreadable_va();
        break;
      case MMUEXT_TLB_FLUSH_MULTI: case MMUEXT_INVLPG_MULTI:
        op.arg1.linear_addr = fuzz_va();
        set_xen_guest_handle(op.arg2.vcpumask, reinterpret_cast<const void*>(read_pointer(8)));
        break;
      case MMUEXT_SET_LDT: {
        restore |= kRestoreLdt;
        op.arg1.linear_addr = random_.coin() ? (fuzz_va() & ~(kPage - 1)) : write_pointer(64);
        static const unsigned kEntries[] = {0, 1, 2, 511, 512, 8191, 8192, 8193, 0xffffffffu};
        op.arg2.nr_ents = random_.coin() ? random_.pick(kEntries) : unsigned(random_.next());
        break;
      }
      case MMUEXT_CLEAR_PAGE: case MMUEXT_COPY_PAGE: {
        unsigned table = non_clone_table();
        unsigned choice = unsigned(random_.below(100));
        if (choice < 45) op.arg1.mfn = data_frame();
        else if (choice < 75 && table < pool_.table_count) op.arg1.mfn = pool_.table_mfn[table];
        else if (choice < 85) op.arg1.mfn = protected_table_frame();
        else op.arg1.mfn = not_ours_frame();
        if (cmd == MMUEXT_COPY_PAGE) {
          unsigned source;
          op.arg2.src_mfn = random_.percent(70) ? (random_.coin() ? data_frame() : scratch_table(source)) : not_ours_frame();
        }
        break;
      }
      case MMUEXT_MARK_SUPER: case MMUEXT_UNMARK_SUPER: {
        unsigned t;
        op.arg1.mfn = random_.percent(70) ? (random_.coin() ? data_frame() : scratch_table(t)) & ~511ull : not_ours_frame();
        break;
      }
      default:
        op.arg1.mfn = random_.coin() ? random_.next() : not_ours_frame();
        break;
    }
  }
  uint64_t protected_frame_not_of_level(unsigned level) {
    for (unsigned attempt = 0; attempt < 8; ++attempt) {
      uint8_t frame_level = 0;
      uint64_t mfn = protected_frame(&frame_level);
      if (frame_level != level) return mfn;
    }
    return not_ours_frame();
  }
  uint64_t protected_table_frame() {
    for (unsigned attempt = 0; attempt < 8; ++attempt) {
      uint8_t level = 0;
      uint64_t mfn = protected_frame(&level);
      if (level != 0) return mfn;
    }
    return not_ours_frame();
  }

  void mmuext_op(Call& call, uint32_t& restore) {
    uint64_t count = batch_count(random_.percent(70) ? 3 : 8);
    uint64_t va = 0, written = 0;
    uint8_t* list = random_.percent(5) ? nullptr : batch_list(count, sizeof(mmuext_op_t), va, written);
    if (list) {
      auto* ops = reinterpret_cast<mmuext_op_t*>(list);
      for (uint64_t i = 0; i < written; ++i) mmuext_request(ops[i], restore);
    } else {
      va = hostile_list_pointer();
    }
    call.number = __HYPERVISOR_mmuext_op;
    call.args[0] = va;
    call.args[1] = count;
    call.args[2] = random_.percent(40) ? 0 : write_pointer(4);
    call.args[3] = foreign_domain();
  }

  // update_va_mapping: an address and the value for its L1 entry. An address in the fuzzed
  // range updates whatever L1 its path leads to now, protected tables included (a scratch
  // table may link one): the executor checks the path of a call it issues alone, but inside a
  // batch earlier entries may change it, so batches use the other addresses only.
  void va_mapping(Call& call, bool in_batch = false) {
    uint64_t va = 0, value = 0;
    unsigned choice = unsigned(random_.below(100));
    if (in_batch && choice < 50) choice = 50 + unsigned(random_.below(50));
    if (choice < 50) {
      va = fuzz_va();
      value = entry_value(1);
    } else if (choice < 64) {
      unsigned index = unsigned(random_.below(pool_.table_count + pool_.data_count));
      va = index < pool_.table_count ? pool_.table_va[index] : pool_.data_va[index - pool_.table_count];
      value = direct_map_value(index);  // a table's direct-map mapping stays unwritable
    } else if (choice < 74 && pool_.protected_slot_count) {
      const ProtectedSlot* slot = protected_l1_slot();
      if (slot) {
        va = slot->va;
        value = protected_value(*slot);
      } else {
        va = untabled_va();
        value = entry_value(1);
      }
    } else {
      va = untabled_va();
      value = entry_value(1);
    }
    va &= random_.percent(90) ? ~(kPage - 1) : ~0ull;
    uint64_t flags;
    switch (random_.below(10)) {
      case 0: case 1: case 2: case 3: flags = UVMF_INVLPG | UVMF_LOCAL; break;
      case 4: case 5: flags = UVMF_TLB_FLUSH | UVMF_LOCAL; break;
      case 6: flags = UVMF_NONE; break;
      case 7: flags = random_.below(3) | UVMF_ALL; break;
      case 8: flags = (read_pointer(8) & ~7ull) | random_.below(3); break;  // UVMF_MULTI: a vCPU mask
      default: flags = random_.next(); break;
    }
    if (!on(kHypervisorPointers) && (flags & ~7ull) >= kHypervisorStart && (flags & ~7ull) < kHypervisorEnd) flags &= 7;
    bool other = on(kForeign) && random_.percent(15);
    call.number = other ? __HYPERVISOR_update_va_mapping_otherdomain : __HYPERVISOR_update_va_mapping;
    call.args[0] = va;
    call.args[1] = value;
    call.args[2] = flags;
    call.args[3] = other ? (random_.coin() ? foreign_domain() : DOMID_SELF) : random_.next();
  }
  const ProtectedSlot* protected_l1_slot() {
    for (unsigned attempt = 0; attempt < 8; ++attempt) {
      const ProtectedSlot* slot = protected_slot();
      if (slot && slot->level == 1 && slot->va) return slot;
    }
    return nullptr;
  }

  // ---- other hypercalls ----------------------------------------------------------------
  // Sub-op arguments with random high bits sometimes: a hypervisor that truncates them to 32
  // bits (as Xen's `int cmd` does) sees the low part, which the filters judge.
  uint64_t command(uint64_t low) {
    return random_.percent(10) ? (low & 0xffffffffull) | (random_.between(1, 0xffffffffull) << 32) : low;
  }
  void timer_pointer_args(Call& call, uint64_t command_value, uint64_t argument) {
    call.args[0] = command(command_value);
    call.args[1] = argument;
  }

  // A block inside a batch could follow an entry that moved or cancelled the timer the
  // operation armed: batches yield instead.
  void sched_op_args(Call& call, Op& op, bool in_batch = false) {
    static const unsigned kWeights[] = {20, 14, 8, 6, 6, 6, 6, 4, 6};
    unsigned cmd = random_.weighted(kWeights, 9);
    if (in_batch && cmd == SCHEDOP_block) cmd = SCHEDOP_yield;
    uint64_t va = 0;
    switch (cmd) {
      case SCHEDOP_yield: call.args[1] = random_.next(); break;
      case SCHEDOP_block:
        arm(op, random_.pick(kTimerDelays));
        call.args[1] = random_.next();
        break;
      case SCHEDOP_shutdown:  // only where the reason cannot be read: the call must fail
        call.args[1] = unreadable_va_no_user();
        break;
      case SCHEDOP_poll:
        if (auto* poll = reinterpret_cast<sched_poll_t*>(take(sizeof(sched_poll_t), va))) {
          uint64_t ports_va;
          auto* ports = reinterpret_cast<evtchn_port_t*>(take(4 * sizeof(evtchn_port_t), ports_va));
          if (ports)
            for (unsigned i = 0; i < 4; ++i) ports[i] = evtchn_port_t(random_.below(1100));
          set_xen_guest_handle(poll->ports, ports ? ports : reinterpret_cast<evtchn_port_t*>(unreadable_va()));
          poll->nr_ports = unsigned(random_.coin() ? random_.below(5) : random_.next());
          poll->timeout = random_.between(1, 1000);  // absolute ns: long past, so it cannot wait
          call.args[1] = va;
        } else {
          call.args[1] = unreadable_va_no_user();
        }
        break;
      case SCHEDOP_remote_shutdown:
        if (auto* remote = reinterpret_cast<sched_remote_shutdown_t*>(take(sizeof(sched_remote_shutdown_t), va))) {
          static const domid_t kAbsent[] = {5, 6, 7, 9, 100, 0x7ff5, 0x7ff3, DOMID_INVALID};
          remote->domain_id = random_.pick(kAbsent);
          remote->reason = unsigned(random_.next());
          call.args[1] = va;
        } else {
          call.args[1] = unreadable_va_no_user();
        }
        break;
      case SCHEDOP_shutdown_code:  // Xen keeps the first code it is given for the domain's end: unreadable only
        call.args[1] = unreadable_va_no_user();
        break;
      case SCHEDOP_watchdog:
        if (auto* watchdog = reinterpret_cast<sched_watchdog_t*>(take(sizeof(sched_watchdog_t), va))) {
          watchdog->id = uint32_t(random_.between(1, 0xffffffffull));  // never 0: that creates one
          watchdog->timeout = 0;                                       // and 0 deletes
          call.args[1] = va;
        } else {
          call.args[1] = unreadable_va_no_user();
        }
        break;
      case SCHEDOP_pin_override:
        call.args[1] = write_pointer(8);
        break;
      default:
        cmd = unsigned(random_.between(8, 0xffffffffull));
        call.args[1] = write_pointer(16);
        break;
    }
    call.args[0] = command(cmd);
  }
  uint64_t unreadable_va_no_user() {
    // The user half is unmapped only while no user base is shared with the kernel: keep to
    // addresses that are never readable.
    switch (random_.below(4)) {
      case 0: return pool_.unmapped_va + random_.below(kPage);
      case 1: return pool_.edge_va + kPage + random_.below(kPage - 8);
      case 2: return non_canonical();
      default: return on(kHypervisorPointers) ? hypervisor_va() | 0xfff000ull : random_.below(kPage);
    }
  }

  void event_channel_args(Call& call) {
    static const unsigned kWeights[] = {4, 6, 3, 8, 8, 6, 4, 4, 5, 8, 2, 0, 2, 3, 2, 3};
    unsigned cmd = random_.weighted(kWeights, 16);
    if (cmd == 15) cmd = unsigned(random_.between(15, 0xffffffffull));
    uint64_t va = 0;
    uint8_t* at = take(32, va);
    if (!at) {
      call.args[0] = command(cmd);
      call.args[1] = unreadable_va_no_user();
      return;
    }
    fill_random(at, 32);
    auto* words = reinterpret_cast<uint32_t*>(at);
    auto port = [&]() -> uint32_t {
      uint32_t value = uint32_t(random_.coin() ? random_.below(64) : random_.below(1100));
      if (random_.percent(5)) value = uint32_t(random_.next());
      return value;
    };
    switch (cmd) {
      case EVTCHNOP_bind_interdomain: {
        auto* bind = reinterpret_cast<evtchn_bind_interdomain_t*>(at);
        bind->remote_dom = domid_t(random_.coin() ? random_.below(3) : random_.bits(16));
        bind->remote_port = port();
        break;
      }
      case EVTCHNOP_bind_virq: {
        auto* bind = reinterpret_cast<evtchn_bind_virq_t*>(at);
        bind->virq = uint32_t(random_.coin() ? random_.below(26) : random_.next());
        bind->vcpu = uint32_t(random_.percent(80) ? 0 : random_.next());
        break;
      }
      case EVTCHNOP_close: words[0] = unprotected_port(port()); break;
      case EVTCHNOP_send: case EVTCHNOP_unmask: words[0] = port(); break;
      case EVTCHNOP_status: {
        auto* status = reinterpret_cast<evtchn_status_t*>(at);
        status->dom = domid_t(random_.coin() ? DOMID_SELF : random_.bits(16));
        status->port = port();
        break;
      }
      case EVTCHNOP_alloc_unbound: {
        auto* alloc = reinterpret_cast<evtchn_alloc_unbound_t*>(at);
        alloc->dom = domid_t(random_.coin() ? DOMID_SELF : random_.bits(16));
        alloc->remote_dom = domid_t(random_.coin() ? random_.below(3) : random_.bits(16));
        break;
      }
      case EVTCHNOP_bind_vcpu: {
        auto* bind = reinterpret_cast<evtchn_bind_vcpu_t*>(at);
        bind->port = port();
        if (is_protected_port(bind->port)) bind->vcpu = 0;  // re-binding the kernel's port to vCPU 0 changes nothing
        break;
      }
      case EVTCHNOP_reset: {  // never our own domain: that closes the kernel's channels
        static const domid_t kOthers[] = {5, 7, 0x7ff5, DOMID_INVALID, DOMID_IO, DOMID_XEN};
        reinterpret_cast<evtchn_reset_t*>(at)->dom = random_.pick(kOthers);
        break;
      }
      default: break;
    }
    call.args[0] = command(cmd);
    call.args[1] = va;
  }
  bool is_protected_port(uint32_t port) const {
    for (unsigned i = 0; i < pool_.protected_port_count; ++i)
      if (pool_.protected_ports[i] == port) return true;
    return false;
  }
  uint32_t unprotected_port(uint32_t port) {
    while (is_protected_port(port)) port = uint32_t(random_.between(64, 1100));
    return port;
  }

  void vcpu_op_args(Call& call, uint32_t& restore) {
    static const unsigned kWeights[] = {3, 3, 0, 8, 6, 4, 6, 4, 8, 4, 0, 2, 3, 3, 4};
    unsigned cmd = random_.weighted(kWeights, 15);
    if (cmd == 14) cmd = unsigned(random_.between(14, 0xffffffffull));
    uint64_t vcpu = random_.percent(80) ? 0 : (random_.coin() ? random_.between(1, 8) : random_.next());
    uint64_t va = 0;
    switch (cmd) {
      case VCPUOP_set_periodic_timer: case VCPUOP_set_singleshot_timer: {
        restore |= kRestoreTimers;
        uint8_t* at = take(16, va);
        if (at) {
          fill_random(at, 16);
          auto* words = reinterpret_cast<uint64_t*>(at);
          static const uint64_t kNs[] = {0, 1, 999999, 1000000, 1000001, 10000000, ~0ull};
          words[0] = random_.coin() ? random_.pick(kNs) : random_.next();
          if (cmd == VCPUOP_set_singleshot_timer) words[1] = random_.below(4);  // flags
          if (cmd == VCPUOP_set_periodic_timer && !on(kHugeTimers)) words[0] &= (1ull << 62) - 1;
        } else {
          va = unreadable_va_no_user();
        }
        break;
      }
      case VCPUOP_register_runstate_memory_area: case VCPUOP_register_vcpu_time_memory_area:
        restore |= kRestoreVcpuAreas;
        va = write_pointer(64);
        break;
      case VCPUOP_stop_periodic_timer: case VCPUOP_stop_singleshot_timer:
        restore |= kRestoreTimers;
        va = random_.next();
        break;
      case VCPUOP_send_nmi:
        restore |= kRestoreNmi;
        va = random_.next();
        break;
      default:
        va = write_pointer(256);
        break;
    }
    call.args[0] = command(cmd);
    call.args[1] = vcpu;
    call.args[2] = va;
  }

  void console_args(Call& call) {
    unsigned choice = unsigned(random_.below(100));
    if (!on(kConsole) || choice < 25) {  // read, or unknown commands
      call.args[0] = command(random_.coin() ? CONSOLEIO_read : random_.between(2, 0xffffffffull));
      call.args[1] = random_.below(256);
      call.args[2] = write_pointer(256);
      return;
    }
    call.args[0] = command(CONSOLEIO_write);
    if (choice < 70) {  // printable text, short
      uint64_t offset = random_.below(pool_.text_size);
      call.args[1] = random_.below(pool_.text_size - offset > 48 ? 48 : pool_.text_size - offset);
      call.args[2] = pool_.text_va + offset;
    } else if (choice < 85) {  // text that runs into the unmapped page
      uint64_t length = random_.between(1, 40);
      uint64_t va = 0;
      if (uint8_t* at = edge_tail(length, 0, va)) {
        for (uint64_t i = 0; i < length; ++i) at[i] = uint8_t('a' + random_.below(26));
        call.args[1] = length + random_.between(1, 100000);
        call.args[2] = va;
      } else {
        call.args[1] = random_.between(1, 100000);
        call.args[2] = unreadable_va_no_user();
      }
    } else if (choice < 90 && on(kFuzzAreaPointers)) {
      call.args[1] = random_.below(24);
      call.args[2] = fuzz_va();
    } else {
      call.args[1] = random_.coin() ? random_.below(4096) : random_.next();
      call.args[2] = unreadable_va_no_user();
    }
  }

  void sysctl_args(Call& call, uint32_t& restore) {
    uint64_t va = 0;
    auto* request = reinterpret_cast<xen_sysctl_t*>(take(sizeof(xen_sysctl_t), va));
    if (!request) {
      call.args[0] = unreadable_va_no_user();
      return;
    }
    fill_random(reinterpret_cast<uint8_t*>(request), sizeof(*request));
    request->interface_version = random_.percent(85) ? XEN_SYSCTL_INTERFACE_VERSION : uint32_t(random_.next());
    unsigned choice = unsigned(random_.below(100));
    if (choice < 50) {
      request->cmd = XEN_SYSCTL_perfc_op;
      request->u.perfc_op.cmd = random_.percent(80) ? XEN_SYSCTL_PERFCOP_query : uint32_t(random_.below(4));
      // The query writes every counter: room for a hundred of each.
      set_xen_guest_handle(request->u.perfc_op.desc, reinterpret_cast<xen_sysctl_perfc_desc_t*>(
                                                          random_.coin() ? 0 : write_pointer(100 * sizeof(xen_sysctl_perfc_desc_t))));
      set_xen_guest_handle(request->u.perfc_op.val, reinterpret_cast<xen_sysctl_perfc_val_t*>(
                                                         random_.coin() ? 0 : write_pointer(100 * sizeof(xen_sysctl_perfc_val_t))));
    } else if (choice < 85) {
      restore |= kRestoreTbuf;
      request->cmd = XEN_SYSCTL_tbuf_op;
      request->u.tbuf_op.cmd = uint32_t(random_.below(8));
      set_xen_guest_handle(request->u.tbuf_op.cpu_mask.bitmap, reinterpret_cast<uint8_t*>(read_pointer(16)));
      request->u.tbuf_op.cpu_mask.nr_bits = uint32_t(random_.coin() ? random_.below(130) : random_.next());
      request->u.tbuf_op.size = uint32_t(random_.coin() ? random_.below(64) : random_.next());
    } else {
      uint32_t cmd = uint32_t(random_.coin() ? random_.below(64) : random_.next());
      if (cmd == 0x8000) cmd = 0x8001;  // the audit runs when the fuzzer asks for it, not at random
      request->cmd = cmd;
    }
    call.args[0] = va;
  }

  void memory_op_args(Call& call) {
    static const unsigned kSafe[] = {XENMEM_maximum_ram_page, XENMEM_current_reservation, XENMEM_maximum_reservation,
                                     XENMEM_machphys_mfn_list, 8, XENMEM_memory_map, XENMEM_machine_memory_map,
                                     XENMEM_machphys_mapping, XENMEM_set_memory_map, XENMEM_maximum_gpfn,
                                     XENMEM_get_pod_target, XENMEM_get_sharing_freed_pages,
                                     XENMEM_get_sharing_shared_pages, XENMEM_machphys_compat_mfn_list,
                                     XENMEM_get_vnumainfo, XENMEM_reserved_device_memory_map, 29, 40, 63};
    uint64_t cmd = random_.pick(kSafe);
    if (random_.percent(10)) cmd |= random_.between(1, 0xffffff) << 6;  // a continuation index above the command
    call.args[0] = command(cmd);
    uint64_t va = 0;
    uint8_t* at = take(64, va);
    if (!at) {
      call.args[1] = unreadable_va_no_user();
      return;
    }
    fill_random(at, 64);
    auto* domid = reinterpret_cast<uint16_t*>(at);
    if (random_.percent(70)) *domid = random_.coin() ? DOMID_SELF : pool_.domid;
    // Memory maps: a count and a buffer the hypervisor writes.
    auto* map = reinterpret_cast<xen_memory_map_t*>(at);
    if ((cmd & 0x3f) == XENMEM_memory_map || (cmd & 0x3f) == XENMEM_machine_memory_map) {
      map->nr_entries = unsigned(random_.coin() ? random_.below(8) : random_.next());
      set_xen_guest_handle(map->buffer, reinterpret_cast<void*>(write_pointer(8 * 24)));
    }
    call.args[1] = va;
  }

  // Arguments for hypercall `number` (its low 32 bits), which is not one of the MMU calls.
  void call_args(uint32_t number, Op& op, Call& call, uint32_t& restore, bool in_batch) {
    for (uint64_t& arg : call.args) arg = random_arg();
    uint64_t va = 0;
    switch (number) {
      case __HYPERVISOR_set_trap_table: {
        restore |= kRestoreTraps;
        unsigned choice = unsigned(random_.below(100));
        if (choice < 10) {
          call.args[0] = 0;
        } else if (choice < 70) {
          uint64_t count = random_.between(1, 8);
          bool terminated = random_.percent(70);
          uint8_t* at = terminated ? take((count + 1) * sizeof(trap_info_t), va) : edge_tail(count * sizeof(trap_info_t), 0, va);
          if (!at) {
            terminated = true;
            at = take((count + 1) * sizeof(trap_info_t), va);
          }
          if (!at) {
            call.args[0] = 0;
            break;
          }
          auto* traps = reinterpret_cast<trap_info_t*>(at);
          for (uint64_t i = 0; i < count; ++i) {
            traps[i].vector = uint8_t(random_.next());
            traps[i].flags = uint8_t(random_.next());
            traps[i].cs = uint16_t(random_.coin() ? kFlatKernelCs : random_.next());
            traps[i].address = random_.coin() ? pool_.kernel_image_va + random_.below(pool_.kernel_image_size)
                                              : (random_.coin() ? non_canonical() : random_.next());
            if (traps[i].address == 0) traps[i].address = 1;
          }
          if (terminated) traps[count] = trap_info_t{};
          call.args[0] = va;
        } else {
          call.args[0] = read_pointer(256);
        }
        break;
      }
      case __HYPERVISOR_set_gdt: {
        uint64_t count = random_.between(1, 16);
        auto* frames = reinterpret_cast<uint64_t*>(take(count * 8, va));
        if (frames)
          for (uint64_t i = 0; i < count; ++i) frames[i] = random_.coin() ? data_frame() : not_ours_frame();
        call.args[0] = frames ? va : unreadable_va_no_user();
        call.args[1] = random_.coin() ? random_.below(count * 512 + 2) : random_.next();
        break;
      }
      case __HYPERVISOR_stack_switch:
        call.args[0] = random_.coin() ? kFlatKernelSs : random_.next();
        call.args[1] = random_.coin() ? pool_.stack_va + random_.below(kPage) : random_.next();
        break;
      case __HYPERVISOR_set_callbacks:
        restore |= kRestoreCallbacks;
        for (unsigned i = 0; i < 3; ++i)
          call.args[i] = random_.coin() ? pool_.kernel_image_va + random_.below(pool_.kernel_image_size) : random_.next();
        break;
      case __HYPERVISOR_fpu_taskswitch:
        restore |= kRestoreFpu;
        call.args[0] = random_.coin() ? random_.below(2) : random_.next();
        break;
      case __HYPERVISOR_sched_op_compat: {
        static const uint64_t kCommands[] = {SCHEDOP_yield, SCHEDOP_block, SCHEDOP_poll, SCHEDOP_shutdown_code, 7, 8, 100};
        uint64_t cmd = random_.pick(kCommands);
        if (cmd == SCHEDOP_block && in_batch) cmd = SCHEDOP_yield;
        if (cmd == SCHEDOP_block) arm(op, random_.pick(kTimerDelays));
        call.args[0] = command(cmd);
        break;
      }
      case __HYPERVISOR_platform_op: case __HYPERVISOR_xsm_op: case __HYPERVISOR_domctl:
      case __HYPERVISOR_hvm_op: case __HYPERVISOR_xenoprof_op: case __HYPERVISOR_argo_op:
      case __HYPERVISOR_xenpmu_op: case __HYPERVISOR_dm_op: case __HYPERVISOR_hypfs_op: case 38: {
        uint8_t* at = take(256, va);
        if (at) {
          fill_random(at, 256);
          reinterpret_cast<uint32_t*>(at)[random_.below(2)] = uint32_t(random_.below(0x20));  // a plausible version or command
        }
        uint64_t pointer = at ? va : unreadable_va_no_user();
        call.args[0] = random_.coin() ? pointer : command(random_.below(32));
        call.args[1] = random_.coin() ? pointer : write_pointer(256);
        call.args[2] = write_pointer(64);
        break;
      }
      case __HYPERVISOR_set_debugreg:
        restore |= kRestoreDebugRegs;
        call.args[0] = random_.coin() ? random_.below(8) : random_.next();
        break;
      case __HYPERVISOR_get_debugreg:
        call.args[0] = random_.coin() ? random_.below(8) : random_.next();
        break;
      case __HYPERVISOR_update_descriptor:
        call.args[0] = (random_.coin() ? data_frame() : not_ours_frame()) * kPage + random_.below(512) * 8;
        break;
      case __HYPERVISOR_memory_op: memory_op_args(call); break;
      case __HYPERVISOR_set_timer_op:
        restore |= kRestoreTimers;
        call.args[0] = random_.coin() ? random_.below(1000000000) : random_.next();
        break;
      case __HYPERVISOR_event_channel_op_compat: {
        uint8_t* at = take(40, va);
        if (at) {
          Call inner;
          event_channel_args(inner);
          fill_random(at, 40);
          *reinterpret_cast<uint32_t*>(at) = uint32_t(inner.args[0]);
          if (reinterpret_cast<uint32_t*>(at)[0] == EVTCHNOP_close || reinterpret_cast<uint32_t*>(at)[0] == EVTCHNOP_reset ||
              reinterpret_cast<uint32_t*>(at)[0] == EVTCHNOP_init_control)
            reinterpret_cast<uint32_t*>(at)[0] = EVTCHNOP_send;
        }
        call.args[0] = at ? va : unreadable_va_no_user();
        break;
      }
      case __HYPERVISOR_xen_version:
        call.args[0] = command(random_.coin() ? random_.below(12) : random_.next());
        call.args[1] = write_pointer(1024);
        break;
      case __HYPERVISOR_console_io: console_args(call); break;
      case __HYPERVISOR_physdev_op_compat: case __HYPERVISOR_physdev_op: {
        restore |= kRestoreIopl;
        uint8_t* at = take(64, va);
        uint64_t cmd = random_.percent(40) ? PHYSDEVOP_set_iopl : random_.below(32);
        if (at) {
          fill_random(at, 64);
          if (number == __HYPERVISOR_physdev_op_compat) {
            reinterpret_cast<uint32_t*>(at)[0] = uint32_t(cmd);
            reinterpret_cast<uint32_t*>(at)[1] = uint32_t(random_.below(5));
          } else if (cmd == PHYSDEVOP_set_iopl) {
            reinterpret_cast<uint32_t*>(at)[0] = uint32_t(random_.coin() ? random_.below(5) : random_.next());
          }
        }
        call.args[0] = number == __HYPERVISOR_physdev_op_compat ? (at ? va : unreadable_va_no_user()) : command(cmd);
        call.args[1] = at ? va : unreadable_va_no_user();
        break;
      }
      case __HYPERVISOR_grant_table_op:
        // The count is how many structures the hypervisor reads and writes back from the
        // pointer on: a big one only where nothing can be written.
        call.args[0] = command(random_.below(16));
        if (random_.percent(80)) {
          call.args[1] = write_pointer(4 * 64);
          call.args[2] = random_.below(5);
        } else {
          call.args[1] = unreadable_va_no_user();
          call.args[2] = random_.next();
        }
        break;
      case __HYPERVISOR_vm_assist:
        restore |= kRestoreVmAssist | kRestoreBase;  // m2p_strict changes what a base switch installs
        call.args[0] = command(random_.below(3));
        call.args[1] = random_.coin() ? random_.pick(kVmAssists) : random_.next();
        break;
      case __HYPERVISOR_vcpu_op: vcpu_op_args(call, restore); break;
      case __HYPERVISOR_set_segment_base:
        restore |= kRestoreSegments;
        call.args[0] = command(random_.below(6));
        call.args[1] = random_.coin() ? random_.next() : (random_.coin() ? non_canonical() : random_.bits(16));
        break;
      case __HYPERVISOR_nmi_op: {
        restore |= kRestoreNmi;
        call.args[0] = command(random_.below(3));
        uint8_t* at = take(16, va);
        if (at) {
          fill_random(at, 16);
          if (random_.coin()) *reinterpret_cast<uint64_t*>(at) = pool_.kernel_image_va + random_.below(pool_.kernel_image_size);
        }
        call.args[1] = at ? va : unreadable_va_no_user();
        break;
      }
      case __HYPERVISOR_sched_op: sched_op_args(call, op, in_batch); break;
      case __HYPERVISOR_callback_op: {
        restore |= kRestoreCallbacks | kRestoreNmi;
        call.args[0] = command(random_.below(3));
        uint8_t* at = take(sizeof(callback_register_t), va);
        if (at) {
          auto* cb = reinterpret_cast<callback_register_t*>(at);
          cb->type = uint16_t(random_.coin() ? random_.below(8) : random_.next());
          cb->flags = uint16_t(random_.next());
          cb->address = random_.coin() ? pool_.kernel_image_va + random_.below(pool_.kernel_image_size) : random_.next();
        }
        call.args[1] = at ? va : read_pointer(sizeof(callback_register_t));
        break;
      }
      case __HYPERVISOR_event_channel_op: event_channel_args(call); break;
      case __HYPERVISOR_sysctl: sysctl_args(call, restore); break;
      case __HYPERVISOR_kexec_op: {
        // Never KEXEC_CMD_kexec (0) nor the loads (1, 4): dom0's kexec is a trusted interface
        // that takes a kernel image (Xen 4.17 faults on a random kexec_load_v1).
        static const uint64_t kCommands[] = {2, 3, 5, 6, 7, 8, 100};
        call.args[0] = command(random_.pick(kCommands));
        call.args[1] = write_pointer(64);
        break;
      }
      default:
        for (unsigned i = 0; i < 3; ++i)
          if (random_.coin()) call.args[i] = write_pointer(64);
        break;
    }
  }
  uint64_t random_arg() {
    switch (random_.below(6)) {
      case 0: return random_.below(16);
      case 1: return random_.next();
      case 2: return ~0ull - random_.below(16);
      case 3: return unreadable_va_no_user();
      default: return random_.bits(unsigned(random_.between(1, 40)));
    }
  }

  static void arm(Op& op, uint64_t delay_ns) {
    op.arm_timer = true;
    op.arm_timer_ns = delay_ns;
  }
  static constexpr uint64_t kTimerDelays[] = {0, 1000, 100000, 1000000, 2000000};
  static constexpr uint64_t kVmAssists[] = {VMASST_TYPE_4gb_segments, VMASST_TYPE_4gb_segments_notify,
                                            VMASST_TYPE_writable_pagetables, VMASST_TYPE_pae_extended_cr3,
                                            VMASST_TYPE_architectural_iopl, VMASST_TYPE_runstate_update_flag,
                                            VMASST_TYPE_m2p_strict, 31, 33, 63, 64};

  static bool is_mmu_number(uint32_t number) {
    return number == __HYPERVISOR_mmu_update || number == __HYPERVISOR_mmuext_op || number == __HYPERVISOR_update_va_mapping ||
           number == __HYPERVISOR_update_va_mapping_otherdomain || number == __HYPERVISOR_multicall;
  }

  // Any hypercall: its number (in or outside the table, possibly >= 2^32) and arguments.
  void any_call(Op& op, Call& call, uint32_t& restore, bool in_multicall) {
    uint64_t number;
    unsigned choice = unsigned(random_.below(100));
    if (choice < 70) number = random_.below(43);
    else if (choice < 80) number = random_.between(43, 63);
    else if (choice < 88) number = random_.coin() ? random_.between(64, 1000) : random_.between(64, 0xffffffffull);
    else number = random_.below(43);
    if (number == __HYPERVISOR_iret) number = __HYPERVISOR_xen_version;  // iret has its own class
    uint32_t low = uint32_t(number);
    if (is_mmu_number(low) && (in_multicall || low == __HYPERVISOR_multicall)) low = __HYPERVISOR_xen_version;
    switch (low) {
      case __HYPERVISOR_mmu_update: mmu_update(call); break;
      case __HYPERVISOR_mmuext_op: mmuext_op(call, restore); break;
      case __HYPERVISOR_update_va_mapping: case __HYPERVISOR_update_va_mapping_otherdomain:
        va_mapping(call, in_multicall);
        break;
      default: call_args(low, op, call, restore, in_multicall); call.number = low; break;
    }
    // High bits: Xen compares the whole register (-ENOSYS); a hypervisor that truncates runs
    // the low part, whose arguments were made safe above.
    if (on(kRaxHigh) && choice >= 88) call.number = (call.number & 0xffffffffull) | (random_.between(1, 0xffffffffull) << 32);
    else if (on(kRaxHigh) && random_.percent(1)) call.number = random_.next() & ~0xffffffffull;  // low part 0: set_trap_table
    if ((call.number & 0xffffffffull) == 0 && call.number != 0) restore |= kRestoreTraps;
  }

  // ---- multicall -----------------------------------------------------------------------
  void multicall(Op& op, Call& call, uint32_t& restore, unsigned depth) {
    uint64_t count = batch_count(random_.percent(75) ? 6 : 24);
    uint64_t va = 0, written = 0;
    uint8_t* list = random_.percent(5) ? nullptr : batch_list(count, sizeof(multicall_entry_t), va, written);
    if (list) {
      auto* entries = reinterpret_cast<multicall_entry_t*>(list);
      // Entries first zeroed: a nested list may point back at this one.
      for (uint64_t i = 0; i < written; ++i) entries[i] = multicall_entry_t{};
      for (uint64_t i = 0; i < written; ++i) multicall_entry(op, entries[i], va, count, restore, depth);
    } else {
      va = hostile_list_pointer();
    }
    call.number = __HYPERVISOR_multicall;
    call.args[0] = va;
    call.args[1] = count;
  }
  void multicall_entry(Op& op, multicall_entry_t& entry, uint64_t list_va, uint64_t list_count, uint32_t& restore,
                       unsigned depth) {
    Call inner;
    unsigned choice = unsigned(random_.below(100));
    if (choice < 20) mmu_update(inner);
    else if (choice < 35) mmuext_op(inner, restore);
    else if (choice < 50) va_mapping(inner, true);
    else if (choice < 80) any_call(op, inner, restore, true);
    else if (choice < 90 && on(kNested)) {
      // A multicall or an iret inside a batch: Xen refuses both per entry.
      if (random_.coin()) {
        inner.number = __HYPERVISOR_multicall;
        if (depth == 0 && random_.coin()) {
          multicall(op, inner, restore, depth + 1);
        } else {
          inner.args[0] = list_va;  // itself: recursion the hypervisor must not follow
          inner.args[1] = list_count;  // entries past the list would be whatever the buffer holds
        }
      } else {
        inner.number = __HYPERVISOR_iret;
        for (uint64_t& arg : inner.args) arg = random_arg();
        if (!op.iret_frame) {
          iret(op);
          op.iret_frame = true;
        }
      }
      if (on(kRaxHigh) && random_.percent(40)) inner.number |= random_.between(1, 0xffffffffull) << 32;
    } else {
      any_call(op, inner, restore, true);
    }
    if (generated_count_ < kMaxGenerated) generated_[generated_count_++] = &entry;
    entry.op = inner.number;
    entry.result = random_.next();
    for (unsigned i = 0; i < 6; ++i) entry.args[i] = inner.args[i];
    if (random_.percent(30)) entry.args[5] = random_.next();
  }

  // ---- direct page-table writes and accesses ---------------------------------------------
  void store_step(Step& step) {
    static const unsigned kWeights[] = {55, 5, 5, 2, 2, 8, 8, 3, 3, 2, 2, 3, 1, 1};
    step.kind = Step::Kind::store;
    step.store = StoreKind(random_.weighted(kWeights, 14));
    step.path = random_.percent(30) ? StorePath::alias : StorePath::direct_map;
    step.alias = uint8_t(random_.below(16));
    if (!on(kAlias)) step.path = StorePath::direct_map;
    if (random_.percent(6)) {  // the kernel L4's fuzz slots (always through its direct map)
      step.table = kKernelL4Table;
      step.slot = uint16_t(kFuzzL4Slots[random_.below(kFuzzSlotCount)]);
      step.path = StorePath::direct_map;
      if (step.store == StoreKind::misaligned || step.store == StoreKind::rep_stos) step.store = StoreKind::mov64;
      step.value = entry_value(4);
      store_operand(step, 4);
      return;
    }
    // Mostly the L1s: their direct writes are what writable pagetables detach.
    unsigned table = random_.percent(65) ? table_of_level(1) : 0;
    if (table == 0) scratch_table(table);
    if (table < pool_.clone_count && random_.percent(70)) scratch_table(table);  // clones less often
    step.table = uint8_t(table);
    unsigned span = step.store == StoreKind::rep_stos ? unsigned(random_.between(1, 3)) : 1;
    step.slot = uint16_t(table_slot_index(table, step.store == StoreKind::misaligned, span));
    unsigned level = pool_.table_level[table];
    if (random_.percent(12)) level = unsigned(random_.between(1, 4));
    step.value = entry_value(level);
    step.operand = span;
    store_operand(step, level);
  }
  void store_operand(Step& step, unsigned level) {
    switch (step.store) {
      case StoreKind::cmpxchg: step.operand = random_.percent(60) ? kUseCurrent : entry_value(level); break;
      case StoreKind::or64: step.operand = random_.bits(64) & kSettableFlags; break;
      case StoreKind::and64: step.operand = ~(random_.bits(64) & kClearableFlags); break;
      case StoreKind::bts: step.operand = random_.pick(kSettableBitNumbers); break;
      case StoreKind::btr: step.operand = random_.pick(kClearableBitNumbers); break;
      case StoreKind::misaligned: step.operand = random_.between(1, 7); break;
      case StoreKind::rep_stos: break;  // the span, set by the caller
      default: step.operand = 0; break;
    }
  }
  uint64_t load_va() {
    switch (random_.below(10)) {
      case 0: return pool_.table_va[random_.below(pool_.table_count)] + random_.below(512) * 8;
      case 1: return on(kHypervisorPointers) ? hypervisor_va() : kHypervisorStart + random_.bits(20) * 8;
      case 2: return unreadable_va();
      case 3: return pool_.data_va[random_.below(pool_.data_count)] + random_.below(512) * 8;
      default: return fuzz_va() & ~7ull;
    }
  }
  void touch_steps(Op& op, unsigned count) {
    for (unsigned i = 0; i < count && op.step_count < kMaxSteps; ++i) {
      Step& step = op.steps[op.step_count++];
      step.va = load_va();
      if (random_.percent(40)) {
        step.kind = Step::Kind::touch_store;
        step.va = random_.percent(80) ? fuzz_va() & ~7ull : pool_.data_va[random_.below(pool_.data_count)] + random_.below(512) * 8;
        step.value = random_.coin() ? entry_value(1) : random_.next() & ~kPresentBit;
      } else {
        step.kind = Step::Kind::load;
      }
    }
  }
  // Both pagetable-write paths on the same table through two of its aliases: a store through
  // one (writable pagetables detach the table and make that alias's entry writable in place),
  // a store into the L1 holding that entry, a load through another alias, a reattach, and a
  // store through the other alias again: the sequences that leave stale writable entries
  // behind in a snapshot or in the TLB if the hypervisor does not re-validate them.
  void alias_sequence(Op& op) {
    unsigned table = table_of_level(1);
    uint8_t first = uint8_t(random_.below(16)), second = uint8_t(first + 1 + random_.below(15));
    auto add = [&](Step step) {
      if (op.step_count < kMaxSteps) op.steps[op.step_count++] = step;
    };
    Step store;
    store.kind = Step::Kind::store;
    store.table = uint8_t(table);
    store.slot = uint16_t(table_slot_index(table, false));
    store.value = entry_value(1);
    store.path = StorePath::alias;
    store.alias = first;
    add(store);
    if (random_.percent(60)) {
      Step holder = store;
      holder.path = StorePath::alias_holder;
      holder.value = entry_value(1);
      add(holder);
    }
    Step load;
    load.kind = Step::Kind::alias_load;
    load.table = uint8_t(table);
    load.alias = second;
    add(load);
    if (random_.percent(70)) add(Step{});  // settle
    Step again = store;
    again.alias = second;
    again.slot = uint16_t(table_slot_index(table, false));
    again.value = entry_value(1);
    add(again);
    if (random_.coin()) add(Step{});
  }

  void ptwrite(Op& op) {
    if (random_.percent(6)) {
      Step rebuild;
      rebuild.kind = Step::Kind::rebuild;
      op.steps[op.step_count++] = rebuild;
    }
    if (random_.percent(20) && on(kAlias)) {
      alias_sequence(op);
      return;
    }
    unsigned stores = unsigned(random_.between(1, 8));
    for (unsigned i = 0; i < stores && op.step_count < kMaxSteps; ++i) {
      store_step(op.steps[op.step_count++]);
      if (random_.percent(20)) touch_steps(op, 1);
    }
    if (random_.percent(30) && op.step_count < kMaxSteps) op.steps[op.step_count++].kind = Step::Kind::settle;
  }

  // ---- iret, rflags, sched, ports, instructions ------------------------------------------
  uint64_t hostile_rflags(bool allow_tf) {
    uint64_t flags = 0x2;
    if (random_.percent(15) && on(kNt)) flags |= kNtFlag;
    if (random_.percent(10) && on(kTf) && allow_tf) flags |= kTfFlag;
    if (random_.percent(15)) flags |= kAcFlag;
    if (random_.percent(15)) flags |= kDfFlag;
    if (random_.percent(5)) flags |= kRfFlag;
    if (random_.percent(8)) flags |= kIdFlag;
    if (random_.percent(8)) flags |= 0x3000;  // IOPL 3 (the hypervisor must not grant it)
    if (random_.percent(4)) flags |= 1u << 17;  // VM
    if (random_.percent(5)) flags |= random_.next() & 0x3f7fd5 & ~kIfFlag & ~(on(kNt) ? 0ull : kNtFlag) & ~(allow_tf && on(kTf) ? 0ull : kTfFlag);
    return flags;
  }
  void iret(Op& op) {
    IretFrame& frame = op.iret;
    frame.rax = random_.next();
    frame.r11 = random_.next();
    frame.rcx = random_.next();
    frame.flags = random_.percent(75) ? 0 : (random_.percent(80) ? VGCF_in_syscall : random_.next());
    // The kernel's code selector with RPL 0..2: the RPL says which mode to return to, and 3
    // (FLAT_KERNEL_CS as the guest sees it) would mean user mode.
    static const uint64_t kCs[] = {kFlatKernelCs & ~3u, 0xe031, 0xe032};
    frame.cs = random_.pick(kCs);
    frame.ss = kFlatKernelSs;
    bool bad_selector = false;
    if (on(kIretSelectors) && random_.percent(30)) {
      // Not 0xe020..0xe023: FLAT_RING3_CS32 is a valid code segment, and landing in 32-bit
      // code with a 64-bit stack pointer the hypervisor cannot bounce to is a legitimate end
      // of the domain (Xen 4.17 crashes it), not a finding.
      static const uint64_t kBadCs[] = {0, 1, 2, 0xe008, 0xe010, 0xe018, 0xe028, 0xe02a, 0x10, 0xffff, 0xfff8};
      static const uint64_t kBadSs[] = {0, 1, 2, 0xe010, 0xe030, 0xe008, 0xe02a, 0x18, 0xfffc};
      if (random_.coin()) frame.cs = random_.coin() ? random_.pick(kBadCs) : random_.next();
      else frame.ss = random_.coin() ? random_.pick(kBadSs) : random_.next();
      bad_selector = true;
    }
    if ((frame.cs & 3) == 3) frame.cs &= ~3ull;  // RPL 3 would switch to user mode
    if ((frame.cs | 3) == kFlatUserCs32) frame.cs = 0xe018;
    bool events = random_.percent(40);
    frame.rflags = hostile_rflags(true) | (events ? kIfFlag : 0);
    frame.rip = IretFrame::Rip::landing;
    frame.rsp = random_.percent(8) ? IretFrame::Rsp::misaligned : IretFrame::Rsp::landing_stack;
    if (on(kIretRip) && !bad_selector && random_.percent(8)) {
      static const IretFrame::Rip kRips[] = {IretFrame::Rip::non_canonical, IretFrame::Rip::unmapped,
                                             IretFrame::Rip::hypervisor};
      frame.rip = random_.pick(kRips);
    }
    // A bad stack is survivable only if nothing needs it: no event, no trap, no fault.
    bool quiet = !events && !(frame.rflags & kTfFlag) && frame.rip == IretFrame::Rip::landing && !bad_selector;
    if (on(kIretRsp) && quiet && random_.percent(10)) {
      static const IretFrame::Rsp kRsps[] = {IretFrame::Rsp::unmapped, IretFrame::Rsp::non_canonical,
                                             IretFrame::Rsp::hypervisor};
      frame.rsp = random_.pick(kRsps);
    }
    frame.number = __HYPERVISOR_iret;
    if (on(kRaxHigh) && random_.percent(8)) frame.number |= random_.between(1, 0xffffffffull) << 32;
  }
  void rflags(Op& op) {
    uint32_t restore = 0;
    op.rflags = hostile_rflags(true);
    switch (random_.below(6)) {
      case 0: op.call.number = __HYPERVISOR_xen_version; op.call.args[0] = XENVER_version; break;
      case 1: mmu_update(op.call); break;
      case 2: mmuext_op(op.call, restore); break;
      case 3: va_mapping(op.call); break;
      case 4: op.call.number = __HYPERVISOR_sched_op; op.call.args[0] = SCHEDOP_yield; break;
      default: any_call(op, op.call, restore, false); break;
    }
    op.restore |= restore;
    // The single-step trap after the call would go to whatever trap table the call installed.
    if (restore & (kRestoreTraps | kRestoreCallbacks | kRestoreNmi)) op.rflags &= ~kTfFlag;
  }
  void sched(Op& op) {
    op.restore |= kRestoreTimers;
    switch (random_.below(6)) {
      case 0: op.call.number = __HYPERVISOR_sched_op; op.call.args[0] = SCHEDOP_yield; break;
      case 1:
        op.call.number = __HYPERVISOR_sched_op;
        op.call.args[0] = SCHEDOP_block;
        arm(op, random_.pick(kTimerDelays));
        break;
      case 2: {
        op.call.number = __HYPERVISOR_set_timer_op;
        static const uint64_t kTimes[] = {0, 1, 1000, ~0ull, 0x8000000000000000ull};
        op.call.args[0] = random_.coin() ? random_.pick(kTimes) : random_.next();
        break;
      }
      case 3: sched_op_args(op.call, op); op.call.number = __HYPERVISOR_sched_op; break;
      default: op.call.number = __HYPERVISOR_vcpu_op; vcpu_op_args(op.call, op.restore); break;
    }
  }
  void ports(Op& op) {
    PortAccess& access = op.port;
    static const uint16_t kHypervisorPorts[] = {0x3f8, 0x3f9, 0x3fa, 0x3fb, 0x3fc, 0x3fd, 0x3ff, 0x20, 0x21, 0xa0, 0xa1,
                                                0x40, 0x41, 0x42, 0x43, 0x61, 0x70, 0x71, 0xf4, 0xf5, 0xf6, 0xf7};
    static const uint16_t kStraddling[] = {0x3f5, 0x3f6, 0x3f7, 0xf1, 0xf2, 0xf3, 0x1f, 0x1e, 0x3e, 0x3f, 0x5e, 0x5f,
                                           0x6e, 0x6f, 0x9e, 0x9f};
    static const uint16_t kOthers[] = {0x80, 0x2f8, 0x2fd, 0x2ff, 0xcf8, 0xcfc, 0x60, 0x64, 0x92, 0xcf9, 0xffff, 0xfffe, 0x0};
    static const uint8_t kWidths[] = {1, 2, 4};
    access.width = random_.pick(kWidths);
    access.out = random_.coin();
    access.string = random_.percent(15);
    access.count = access.string ? random_.between(1, 8) : 1;
    access.value = uint32_t(random_.next());
    access.iopl = uint32_t(random_.percent(75) ? random_.between(1, 3) : 0);
    switch (random_.below(4)) {
      case 0: access.port = random_.pick(kHypervisorPorts); break;
      case 1: access.port = random_.pick(kStraddling); break;
      case 2: access.port = random_.pick(kOthers); break;
      default: access.port = uint16_t(random_.next()); break;
    }
    // dom0 owns the machine's other devices: it may only write where the hypervisor must
    // drop the write (whatever a write elsewhere does is dom0's own business, resets included).
    if (pool_.privileged && access.out && !dom0_may_write(access.port, access.width)) {
      access.port = random_.pick(kHypervisorPorts);
      if (!dom0_may_write(access.port, access.width)) access.width = 1;
    }
    op.restore |= kRestoreIopl;
  }
  static bool dom0_may_write(uint16_t port, unsigned width) {
    for (unsigned i = 0; i < width; ++i)
      if (!hypervisor_owned_port(uint16_t(port + i))) return false;
    return true;
  }
  void insn(Op& op) {
    Insn& insn = op.insn;
    insn.kind = InsnKind(random_.below(unsigned(InsnKind::count)));
    insn.rax = random_.next();
    insn.rdx = random_.next();
    insn.rcx = random_.next();
    switch (insn.kind) {
      case InsnKind::int_n: {
        static const uint8_t kVectors[] = {0x80, 0x82, 0x81, 0x20, 0x21, 0x22, 0x2f, 0x30, 0xef, 0xf0, 0xfe, 0xff, 2, 8, 18, 14, 13, 1};
        insn.vector = random_.coin() ? random_.pick(kVectors) : uint8_t(random_.next());
        break;
      }
      case InsnKind::rdmsr: case InsnKind::wrmsr: {
        static const uint64_t kMsrs[] = {0xc0000080, 0xc0000081, 0xc0000082, 0xc0000083, 0xc0000084, 0xc0000100,
                                         0xc0000101, 0xc0000102, 0x1b, 0x10, 0x3a, 0x174, 0x175, 0x176, 0x1d9,
                                         0x277, 0x800, 0x830, 0xc0000103};
        insn.rcx = random_.coin() ? random_.pick(kMsrs) : uint64_t(uint32_t(random_.next()));
        break;
      }
      case InsnKind::mov_cr3:  // only frames that cannot become our base: the kernel L4, or refused ones
        insn.rax = (random_.coin() ? pool_.kernel_l4_mfn : protected_frame_not_of_level(4)) << 12;
        break;
      case InsnKind::hlt: arm(op, 1000000); break;
      case InsnKind::lgdt: case InsnKind::lidt: insn.rax = write_pointer(16); break;
      case InsnKind::invlpg: insn.rax = fuzz_va(); break;
      default: break;
    }
  }

  const Pool& pool_;
  const Options& options_;
  Random random_;
  uint64_t used_ = 0;
  // The multicall entries of this operation (all levels), for the pass that keeps an iret
  // entry out of a batch that also replaces the trap table or the callbacks.
  static constexpr unsigned kMaxGenerated = 128;
  multicall_entry_t* generated_[kMaxGenerated] = {};
  unsigned generated_count_ = 0;
  bool edge_used_ = false;
  uint64_t edge_mapped_ = 0;
  uint8_t staging_[kPage];
};

void Generator::finish() { copy_edge(); }

constexpr uint64_t Generator::kTimerDelays[];
constexpr uint64_t Generator::kVmAssists[];

void Generator::run(Op& op) {
  op = Op{};
  unsigned weights[kClassCount] = {};
  static const unsigned kClassWeights[kClassCount] = {18, 14, 12, 8, 8, 16, 6, 4, 3, 3, 3, 5};
  for (unsigned i = 0; i < kClassCount; ++i) weights[i] = on(Feature(i)) ? kClassWeights[i] : 0;
  unsigned total = 0;
  for (unsigned weight : weights) total += weight;
  if (total == 0 || pool_.table_count == 0 || pool_.data_count == 0) {
    op.kind = OpKind::ptwrite;
    op.steps[0].kind = Step::Kind::settle;
    op.step_count = 1;
    return;
  }
  op.kind = OpKind(random_.weighted(weights, kClassCount));
  switch (op.kind) {
    case OpKind::call: any_call(op, op.call, op.restore, false); break;
    case OpKind::mmu: mmu_update(op.call); break;
    case OpKind::mmuext: mmuext_op(op.call, op.restore); break;
    case OpKind::va_mapping: va_mapping(op.call); break;
    case OpKind::multicall:
      multicall(op, op.call, op.restore, 0);
      // An iret entry unmasks events or traps at the landing pad, which would go to the junk
      // handlers an earlier entry installed (the restore comes after the operation).
      if (op.iret_frame && (op.restore & (kRestoreTraps | kRestoreCallbacks | kRestoreNmi))) {
        for (unsigned i = 0; i < generated_count_; ++i)
          if (uint32_t(generated_[i]->op) == __HYPERVISOR_iret) generated_[i]->op = __HYPERVISOR_xen_version;
        op.iret_frame = false;
      }
      break;
    case OpKind::ptwrite: ptwrite(op); break;
    case OpKind::touch: touch_steps(op, unsigned(random_.between(1, 8))); break;
    case OpKind::iret: iret(op); break;
    case OpKind::rflags: rflags(op); break;
    case OpKind::sched: sched(op); break;
    case OpKind::ports: ports(op); break;
    case OpKind::insn: insn(op); break;
  }
}

}  // namespace

const char* op_kind_name(OpKind kind) {
  static const char* const kNames[] = {"call", "mmu", "mmuext", "va", "multicall", "ptwrite", "touch", "iret", "rflags", "sched", "ports", "insn"};
  return unsigned(kind) < sizeof(kNames) / sizeof(kNames[0]) ? kNames[unsigned(kind)] : "?";
}

void generate(const Pool& pool, const Options& options, uint64_t op, Op& out) {
  Generator generator(pool, options, op);
  generator.run(out);
  generator.finish();
}

}  // namespace lib::fuzz
