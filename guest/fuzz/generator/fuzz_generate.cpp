// The choice of operation, and what every part of the generator (fuzz/generator/fuzz_generator.h) builds
// on: the operation's buffers, the addresses it aims at, the frames and the page-table entries.
#include "fuzz/generator/fuzz_generator.h"

namespace lib::fuzz::detail {

uint8_t* Generator::take(uint64_t bytes, uint64_t& va) {
  uint64_t start = (used_ + 7) & ~7ull;
  if (start + bytes > pool_.buffer_size) return nullptr;
  used_ = start + bytes;
  va = pool_.buffer_va + start;
  return pool_.buffer + start;
}

void Generator::fill_random(uint8_t* at, uint64_t bytes) {
  for (uint64_t i = 0; i < bytes; i += 8) {
    uint64_t word = random_.next();
    for (uint64_t b = 0; b < 8 && i + b < bytes; ++b) at[i + b] = uint8_t(word >> (8 * b));
  }
}

uint8_t* Generator::edge_tail(uint64_t bytes, uint64_t skew, uint64_t& va) {
  if (edge_used_ || bytes == 0) return nullptr;
  if (bytes > kPage) bytes = kPage;
  if (skew >= bytes) skew = bytes - 1;
  edge_used_ = true;
  edge_mapped_ = bytes - skew;
  va = pool_.edge_va + kPage - edge_mapped_;
  for (uint64_t i = 0; i < bytes; ++i) staging_[i] = 0;
  return staging_;
}

void Generator::copy_edge() {
  if (!edge_used_) return;
  for (uint64_t i = 0; i < edge_mapped_; ++i) pool_.edge[kPage - edge_mapped_ + i] = staging_[i];
}

uint64_t Generator::non_canonical() {
  static const uint64_t kValues[] = {0x0000800000000000ull, 0x8000000000000000ull, 0x7fffffffffffffffull,
                                     0xfffe000000000000ull, 0x00007ffffffff000ull + 0x1000};
  return random_.coin() ? random_.pick(kValues)
                        : ((random_.next() & 0x7fff000000000000ull) | 0x0000800000000000ull) ^ random_.bits(47);
}

uint64_t Generator::hypervisor_va() {
  switch (random_.below(4)) {
    case 0: return kHypervisorStart + random_.bits(22) * 8;  // the read-only M2P
    case 1: return kHypervisorStart + (random_.below(16) << 39) + random_.bits(39);
    case 2: return kHypervisorEnd - 8 + random_.below(16);
    default: return kHypervisorStart - random_.below(4) * kPage;  // just below it
  }
}

uint64_t Generator::unreadable_va() {
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

uint64_t Generator::untabled_va() {
  switch (random_.below(on(kHypervisorPointers) ? 6 : 5)) {
    case 0: return random_.below(kPage * 16);
    case 1: return pool_.unmapped_va + random_.below(kPage);
    case 2: return non_canonical();
    case 3: return random_.between(0x1000, 0x00007fffffffffffull);
    case 4: return 0xffff000000000000ull | (random_.between(272, 299) << 39) | random_.bits(39);
    default: return hypervisor_va();
  }
}

uint64_t Generator::fuzz_va() {
  uint64_t slot = kFuzzL4Slots[random_.below(kFuzzSlotCount)];
  uint64_t l3 = random_.percent(70) ? random_.below(2) : random_.below(512);
  uint64_t l2 = random_.percent(70) ? random_.below(4) : random_.below(512);
  uint64_t l1 = random_.percent(70) ? random_.below(16) : random_.below(512);
  uint64_t va = (slot << 39) | (l3 << 30) | (l2 << 21) | (l1 << 12);
  va |= 0xffff000000000000ull;  // the fuzz slots are in the upper half
  return va + (random_.percent(80) ? random_.below(kPage / 8) * 8 : random_.below(kPage));
}

uint64_t Generator::write_pointer(uint64_t bytes) {
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
  if (choice < 88 && pool_.table_count)
    return pool_.table_va[random_.below(pool_.table_count)] + random_.below(kPage / 8) * 8;
  if (choice < 91) return pool_.read_only_va + random_.below(kPage / 8) * 8;
  return unreadable_va();
}

uint64_t Generator::read_pointer(uint64_t bytes) {
  switch (random_.below(10)) {
    case 0:
      return pool_.kernel_image_va +
             random_.below(pool_.kernel_image_size > bytes ? pool_.kernel_image_size - bytes : 1);
    case 1: return pool_.stack_va + random_.below(kPage);
    case 2:
      if (on(kFuzzAreaPointers)) return fuzz_va();
      [[fallthrough]];
    case 3: return pool_.text_va + random_.below(pool_.text_size);
    case 4: return unreadable_va();
    default: return write_pointer(bytes);
  }
}

uint64_t Generator::scratch_table(unsigned& index) {
  index = unsigned(random_.below(pool_.table_count));
  return pool_.table_mfn[index];
}

unsigned Generator::table_of_level(unsigned level) {
  unsigned candidates[kMaxTables];
  unsigned count = 0;
  for (unsigned i = 0; i < pool_.table_count; ++i)
    if (pool_.table_level[i] == level) candidates[count++] = i;
  return count ? candidates[random_.below(count)] : unsigned(random_.below(pool_.table_count));
}

unsigned Generator::non_clone_table() {
  if (pool_.table_count <= pool_.clone_count) return pool_.table_count;  // none
  return pool_.clone_count + unsigned(random_.below(pool_.table_count - pool_.clone_count));
}

uint64_t Generator::protected_frame(uint8_t* level) {
  if (!pool_.protected_frame_count) return pool_.kernel_l4_mfn;
  const OtherFrame& frame = pool_.protected_frames[random_.below(pool_.protected_frame_count)];
  if (level) *level = frame.level;
  return frame.mfn;
}

uint64_t Generator::typed_protected_frame(uint8_t* level) {
  for (unsigned attempt = 0; attempt < 8; ++attempt) {
    uint64_t mfn = protected_frame(level);
    if (!is_read_only_frame(pool_, mfn)) return mfn;
  }
  if (level) *level = 0;
  return not_ours_frame();
}

uint64_t Generator::hypervisor_frame() {
  if (!pool_.hypervisor_mfn_count || random_.one_in(4)) return random_.below(0x100);  // low memory is the hypervisor's
  return pool_.hypervisor_mfns[random_.below(pool_.hypervisor_mfn_count)];
}

uint64_t Generator::foreign_frame() {
  if (!pool_.foreign_mfn_count || random_.one_in(4))
    return random_.below(pool_.max_ram_page ? pool_.max_ram_page : 0x20000);
  return pool_.foreign_mfns[random_.below(pool_.foreign_mfn_count)];
}

uint64_t Generator::io_frame() {
  if (random_.coin()) return random_.pick(kIoFrames);
  return pool_.max_ram_page + random_.below(0x200000);  // beyond RAM: I/O space for dom0
}

uint64_t Generator::not_ours_frame() {
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

uint64_t Generator::leaf_flags() {
  uint64_t flags = random_.percent(92) ? kPresentBit : 0;
  if (random_.coin()) flags |= kWritableBit;
  if (random_.coin()) flags |= kUserBit;
  if (random_.coin()) flags |= kAccessedBit;
  if (random_.percent(40)) flags |= kDirtyBit;
  if (random_.percent(10)) flags |= kGlobalBit;
  if (random_.percent(20)) flags |= kNoExecuteBit;
  if (random_.percent(15)) flags |= random_.bits(3) << 9;   // available to software
  if (random_.percent(8)) flags |= random_.bits(11) << 52;  // available (62: Xen's grant bit)
  if (random_.percent(5)) flags |= (random_.bits(3) << 3);  // PWT, PCD
  if (random_.percent(5)) flags |= kLargeBit;               // PAT in an L1 entry
  return flags;
}

uint64_t Generator::table_flags() {
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

uint64_t Generator::entry_value(unsigned level) {
  uint64_t mfn;
  if (random_.percent(4)) return 0;
  if (random_.percent(2)) return sanitize_entry(pool_, random_.next());
  unsigned choice = unsigned(random_.below(100));
  if (level <= 1) {
    if (choice < 42)
      mfn = data_frame();
    else if (choice < 64) {
      unsigned t;
      mfn = scratch_table(t);
    } else if (choice < 76)
      mfn = protected_frame();
    else
      mfn = not_ours_frame();
  } else {
    if (choice < 50)
      mfn = pool_.table_mfn[table_of_level(level - 1)];
    else if (choice < 66) {
      unsigned t;
      mfn = scratch_table(t);
    } else if (choice < 74)
      mfn = data_frame();
    else if (choice < 84)
      mfn = protected_frame();
    else
      mfn = not_ours_frame();
  }
  bool leaf = level <= 1;
  if (random_.percent(10)) leaf = !leaf;  // flags of the other kind
  uint64_t value = ((mfn << 12) & kAddressBits) | (leaf ? leaf_flags() : table_flags());
  if (random_.percent(6))
    value |= (random_.bits(12) | 1) << 40 >> random_.below(12) << random_.below(1);  // reserved address bits
  return sanitize_entry(pool_, value);
}

uint64_t Generator::writable_slot(unsigned& level) {
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

unsigned Generator::table_slot_index(unsigned table, bool misaligned, unsigned span) {
  for (;;) {
    unsigned index;
    unsigned choice = unsigned(random_.below(100));
    if (choice < 45)
      index = unsigned(random_.below(8));
    else if (choice < 50)
      index = unsigned(random_.between(16, 18));  // where the initial tree keeps its aliases
    else if (choice < 55 && pool_.table_level[table] == 4)
      index = kFuzzL4Slots[random_.below(kFuzzSlotCount)];
    else if (choice < 60 && pool_.table_level[table] == 4)
      index = unsigned(random_.between(kFirstHypervisorSlot, kLastHypervisorSlot));
    else if (choice < 66)
      index = 511 - unsigned(random_.below(2));
    else
      index = unsigned(random_.below(512));
    if (misaligned || span > 1)
      index = index > 512 - span - (misaligned ? 1 : 0) ? 512 - span - (misaligned ? 1 : 0) : index;
    if (table < pool_.clone_count) {
      unsigned last = index + span - 1 + (misaligned ? 1 : 0);
      if (last >= kKernelL4Slot && index <= kKernelL4Slot) continue;
    }
    return index;
  }
}

uint64_t Generator::value_for_slot(uint64_t machine_address, unsigned level) {
  for (unsigned i = 0; i < pool_.table_count + pool_.data_count; ++i) {
    unsigned slot = i < pool_.table_count ? i : kMaxTables + (i - pool_.table_count);
    if (pool_.direct_map_slot_ma[slot] == machine_address) return direct_map_value(i);
  }
  if (random_.percent(12)) level = unsigned(random_.between(1, 4));  // the wrong level on purpose
  return entry_value(level);
}

uint64_t Generator::direct_map_value(unsigned index) {
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

uint64_t Generator::protected_value(const ProtectedSlot& slot) {
  bool hypervisor_slot = slot.level == 4 && ((slot.machine_address & (kPage - 1)) / 8) >= kFirstHypervisorSlot &&
                         ((slot.machine_address & (kPage - 1)) / 8) <= kLastHypervisorSlot;
  if (hypervisor_slot && on(kHypervisorSlots) && random_.coin())
    return random_.coin() ? entry_value(4) : random_.next();
  switch (random_.below(4)) {
    case 0: return slot.value;
    case 1:
      if (slot.level == 1 && slot.maps_table) return slot.value | kWritableBit;
      [[fallthrough]];
    case 2:
      return slot.value | kPresentBit |
             ((random_.bits(12) | 1)
              << 40);  // beyond the physical width (present: a not-present entry may hold anything)
    default:
      if (slot.level > 1 && (slot.value & kPresentBit)) return slot.value | kLargeBit;
      return slot.value;
  }
}

const ProtectedSlot* Generator::protected_slot() {
  if (!pool_.protected_slot_count) return nullptr;
  return &pool_.protected_slots[random_.below(pool_.protected_slot_count)];
}

uint64_t Generator::foreign_domain() {
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

uint64_t Generator::batch_count(uint64_t typical_max) {
  if (random_.percent(4)) return 0;
  if (on(kHugeCounts) && random_.percent(4)) {
    static const uint64_t kHuge[] = {0x100000000ull,        0x100000001ull, 0xffffffffull,
                                     0x8000000000000000ull, ~0ull,          0x80000000ull};
    return random_.pick(kHuge);
  }
  return random_.between(1, typical_max);
}

uint8_t* Generator::batch_list(uint64_t count, uint64_t size, uint64_t& va, uint64_t& written) {
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

void Generator::finish() { copy_edge(); }

void Generator::run(Op& op) {
  op = Op{};
  unsigned weights[kClassCount] = {};
  static const unsigned kClassWeights[kClassCount] = {18, 14, 12, 8, 8, 16, 6, 4, 3, 3, 3, 5, 5, 2};
  for (unsigned i = 0; i < kClassCount; ++i) weights[i] = on(Feature(i)) ? kClassWeights[i] : 0;
  if (pool_.hv_frame_count == 0) weights[kHvFrames] = 0;
  if (!pool_.privileged) weights[kDestroy] = 0;  // domain control is dom0's
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
    case OpKind::hv_frames: hv_frames(op); break;
    case OpKind::destroy: destruction(op); break;
  }
}

}  // namespace lib::fuzz::detail

namespace lib::fuzz {

const char* op_kind_name(OpKind kind) {
  static const char* const kNames[] = {"call", "mmu",    "mmuext", "va",    "multicall", "ptwrite",   "touch",
                                       "iret", "rflags", "sched",  "ports", "insn",      "hv_frames", "destroy"};
  return unsigned(kind) < sizeof(kNames) / sizeof(kNames[0]) ? kNames[unsigned(kind)] : "?";
}

void generate(const Pool& pool, const Options& options, uint64_t op, Op& out) {
  detail::Generator generator(pool, options, op);
  generator.run(out);
  generator.finish();
}

}  // namespace lib::fuzz
