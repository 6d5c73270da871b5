// The MMU hypercalls of the generator (fuzz/generator/fuzz_generator.h): mmu_update requests aimed at
// scratch slots, protected slots and tables that are not ours; mmuext_op commands with the
// frames each may name; update_va_mapping addresses and values; multicall batches of all of it.
#include "fuzz/generator/fuzz_generator.h"

namespace lib::fuzz::detail {

void Generator::mmu_request(uint64_t& ptr, uint64_t& val) {
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
    uint64_t mfn = random_.percent(75)
                       ? (random_.coin() ? data_frame() : pool_.table_mfn[random_.below(pool_.table_count)])
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

void Generator::mmu_update(Call& call) {
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

void Generator::mmuext_request(mmuext_op_t& op, uint32_t& restore) {
  static const unsigned kCommands[] = {MMUEXT_PIN_L1_TABLE,
                                       MMUEXT_PIN_L2_TABLE,
                                       MMUEXT_PIN_L3_TABLE,
                                       MMUEXT_PIN_L4_TABLE,
                                       MMUEXT_UNPIN_TABLE,
                                       MMUEXT_NEW_BASEPTR,
                                       MMUEXT_TLB_FLUSH_LOCAL,
                                       MMUEXT_INVLPG_LOCAL,
                                       MMUEXT_TLB_FLUSH_MULTI,
                                       MMUEXT_INVLPG_MULTI,
                                       MMUEXT_TLB_FLUSH_ALL,
                                       MMUEXT_INVLPG_ALL,
                                       MMUEXT_FLUSH_CACHE,
                                       MMUEXT_SET_LDT,
                                       14,
                                       MMUEXT_NEW_USER_BASEPTR,
                                       MMUEXT_CLEAR_PAGE,
                                       MMUEXT_COPY_PAGE,
                                       MMUEXT_FLUSH_CACHE_GLOBAL,
                                       MMUEXT_MARK_SUPER,
                                       MMUEXT_UNMARK_SUPER,
                                       21};
  static const unsigned kWeights[] = {12, 7, 6, 6, 10, 6, 8, 6, 2, 2, 2, 2, 2, 3, 1, 8, 4, 4, 1, 2, 2, 1};
  static_assert(sizeof(kCommands) == sizeof(kWeights));
  unsigned cmd = kCommands[random_.weighted(kWeights, sizeof(kWeights) / sizeof(kWeights[0]))];
  if (random_.percent(2)) cmd = unsigned(random_.next());
  op = mmuext_op_t{};
  op.cmd = cmd;
  op.arg2.nr_ents = unsigned(random_.next());
  switch (cmd) {
    case MMUEXT_PIN_L1_TABLE:
    case MMUEXT_PIN_L2_TABLE:
    case MMUEXT_PIN_L3_TABLE:
    case MMUEXT_PIN_L4_TABLE: {
      unsigned level = cmd - MMUEXT_PIN_L1_TABLE + 1;
      unsigned choice = unsigned(random_.below(100));
      if (choice < 45)
        op.arg1.mfn = pool_.table_mfn[table_of_level(level)];
      else if (choice < 70) {
        unsigned t;
        op.arg1.mfn = scratch_table(t);
      } else if (choice < 78)
        op.arg1.mfn = data_frame();
      else if (choice < 88)
        op.arg1.mfn = protected_frame_not_of_level(level);
      else
        op.arg1.mfn = not_ours_frame();
      break;
    }
    case MMUEXT_UNPIN_TABLE: {
      unsigned table = non_clone_table();
      unsigned choice = unsigned(random_.below(100));
      if (choice < 80 && table < pool_.table_count)
        op.arg1.mfn = pool_.table_mfn[table];
      else if (choice < 88)
        op.arg1.mfn = data_frame();
      else
        op.arg1.mfn = not_ours_frame();
      break;
    }
    case MMUEXT_NEW_BASEPTR: {
      restore |= kRestoreBase;
      unsigned choice = unsigned(random_.below(100));
      if (choice < 30 || (choice < 70 && (!on(kBasePointer) || !pool_.clone_count)))
        op.arg1.mfn = pool_.kernel_l4_mfn;
      else if (choice < 70)
        op.arg1.mfn = pool_.table_mfn[random_.below(pool_.clone_count)];
      else if (choice < 85)
        op.arg1.mfn = protected_frame_not_of_level(4);
      else
        op.arg1.mfn = not_ours_frame();
      break;
    }
    case MMUEXT_NEW_USER_BASEPTR: {
      unsigned choice = unsigned(random_.below(100));
      if (choice < 15)
        op.arg1.mfn = 0;
      else if (choice < 65) {
        unsigned t;
        op.arg1.mfn = scratch_table(t);
      } else if (choice < 75)
        op.arg1.mfn = pool_.kernel_l4_mfn;
      else if (choice < 85)
        op.arg1.mfn = typed_protected_frame();
      else
        op.arg1.mfn = not_ours_frame();
      // Several vCPUs: vCPU 0's operation may have m2p_strict on while another vCPU installs
      // the kernel L4 as its user base, which clears the L4's M2P slot for good (only a switch
      // of kernel base to it fills it again): the kernel would fault reading the M2P.
      if (pool_.vcpus > 1 && op.arg1.mfn == pool_.kernel_l4_mfn) op.arg1.mfn = 0;
      break;
    }
    case MMUEXT_INVLPG_LOCAL:
    case MMUEXT_INVLPG_ALL: op.arg1.linear_addr = random_.percent(80) ? fuzz_va() : unreadable_va(); break;
    case MMUEXT_TLB_FLUSH_MULTI:
    case MMUEXT_INVLPG_MULTI:
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
    case MMUEXT_CLEAR_PAGE:
    case MMUEXT_COPY_PAGE: {
      unsigned table = non_clone_table();
      unsigned choice = unsigned(random_.below(100));
      if (choice < 45)
        op.arg1.mfn = data_frame();
      else if (choice < 75 && table < pool_.table_count)
        op.arg1.mfn = pool_.table_mfn[table];
      else if (choice < 85)
        op.arg1.mfn = protected_table_frame();
      else
        op.arg1.mfn = not_ours_frame();
      if (cmd == MMUEXT_COPY_PAGE) {
        unsigned source;
        op.arg2.src_mfn =
            random_.percent(70) ? (random_.coin() ? data_frame() : scratch_table(source)) : not_ours_frame();
      }
      break;
    }
    case MMUEXT_MARK_SUPER:
    case MMUEXT_UNMARK_SUPER: {
      unsigned t;
      op.arg1.mfn =
          random_.percent(70) ? (random_.coin() ? data_frame() : scratch_table(t)) & ~511ull : not_ours_frame();
      break;
    }
    default: op.arg1.mfn = random_.coin() ? random_.next() : not_ours_frame(); break;
  }
}

uint64_t Generator::protected_frame_not_of_level(unsigned level) {
  for (unsigned attempt = 0; attempt < 8; ++attempt) {
    uint8_t frame_level = 0;
    uint64_t mfn = typed_protected_frame(&frame_level);
    if (frame_level != level) return mfn;
  }
  return not_ours_frame();
}

uint64_t Generator::protected_table_frame() {
  for (unsigned attempt = 0; attempt < 8; ++attempt) {
    uint8_t level = 0;
    uint64_t mfn = protected_frame(&level);
    if (level != 0) return mfn;
  }
  return not_ours_frame();
}

void Generator::mmuext_op(Call& call, uint32_t& restore) {
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

void Generator::va_mapping(Call& call, bool in_batch) {
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
    case 0:
    case 1:
    case 2:
    case 3: flags = UVMF_INVLPG | UVMF_LOCAL; break;
    case 4:
    case 5: flags = UVMF_TLB_FLUSH | UVMF_LOCAL; break;
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

const ProtectedSlot* Generator::protected_l1_slot() {
  for (unsigned attempt = 0; attempt < 8; ++attempt) {
    const ProtectedSlot* slot = protected_slot();
    if (slot && slot->level == 1 && slot->va) return slot;
  }
  return nullptr;
}

void Generator::multicall(Op& op, Call& call, uint32_t& restore, unsigned depth) {
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

void Generator::multicall_entry(Op& op, multicall_entry_t& entry, uint64_t list_va, uint64_t list_count,
                                uint32_t& restore, unsigned depth) {
  Call inner;
  unsigned choice = unsigned(random_.below(100));
  if (choice < 20)
    mmu_update(inner);
  else if (choice < 35)
    mmuext_op(inner, restore);
  else if (choice < 50)
    va_mapping(inner, true);
  else if (choice < 80)
    any_call(op, inner, restore, true);
  else if (choice < 90 && on(kNested)) {
    // A multicall or an iret inside a batch: Xen refuses both per entry.
    if (random_.coin()) {
      inner.number = __HYPERVISOR_multicall;
      if (depth == 0 && random_.coin()) {
        multicall(op, inner, restore, depth + 1);
      } else {
        inner.args[0] = list_va;     // itself: recursion the hypervisor must not follow
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

}  // namespace lib::fuzz::detail
