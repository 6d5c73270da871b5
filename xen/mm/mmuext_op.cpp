#include "mm/mmuext_op.h"

#include "mm/error.h"
#include "mm/page_refs.h"
#include "mm/table_access.h"

namespace mm {

namespace {

// The pin flag is set by one atomic operation after the references are taken: of two CPUs
// pinning one table, one gets the pin and the other gives its references back (-EINVAL).
int pin_table(MmuContext& context, uint64_t mfn, PagingLevel level) {
  int rc = get_page_and_type(context, mfn, context.domain.id, table_type(level));
  if (rc != 0) return rc;
  if (!set_pinned(context.frames.info(mfn))) {
    put_page_and_type(context.frames, mfn);
    return error(XEN_EINVAL);
  }
  return 0;
}

// Cleared by one atomic operation: of two CPUs unpinning one table, one drops the pin's
// references. The general reference held meanwhile keeps the frame from being freed (and
// given to another owner) under the unpin.
int unpin_table(MmuContext& context, uint64_t mfn) {
  if (get_page(context.frames, mfn, context.domain.id) != 0) return error(XEN_EINVAL);
  int rc = error(XEN_EINVAL);
  if (clear_pinned(context.frames.info(mfn))) {
    put_page_and_type(context.frames, mfn);
    rc = 0;
  }
  put_page(context.frames, mfn);
  return rc;
}

// The read-only M2P slot is present in every validated L4; m2p_strict guests hide it from
// user mode by having it cleared in L4s installed as user base (Xen's zap_ro_mpt), and a
// table installed as kernel base always gets it back (Xen's fill_ro_mpt).
// Under the L4's frame lock, as any store into a validated table (the caller holds a type
// reference: the lock cannot fail).
void set_m2p_slot(MmuContext& context, uint64_t l4_mfn, bool visible) {
  PageTableEntry entry = visible ? context.hypervisor_slots.slot(kReadOnlyM2pSlot) : PageTableEntry();
  if (!lock_table(context.frames.info(l4_mfn), PageType::L4, context.domain.id)) return;
  store_entry(context.frames, l4_mfn, kReadOnlyM2pSlot, entry);
  unlock_table(context.frames, l4_mfn);
}

int new_kernel_base(MmuContext& context, VcpuBasePointers& bases, uint64_t mfn) {
  if (mfn != bases.kernel_mfn) {
    int rc = get_page_and_type(context, mfn, context.domain.id, PageType::L4);
    if (rc != 0) return rc;
    set_m2p_slot(context, mfn, true);
    const uint64_t old = bases.kernel_mfn;
    bases.kernel_mfn = mfn;
    if (old != 0) put_page_and_type(context.frames, old);
  }
  context.effects.load_kernel_base = true;
  return 0;
}

int new_user_base(MmuContext& context, VcpuBasePointers& bases, uint64_t mfn) {
  if (mfn == bases.user_mfn) return 0;
  if (mfn != 0) {
    int rc = get_page_and_type(context, mfn, context.domain.id, PageType::L4);
    if (rc != 0) return rc;
    if (context.domain.m2p_strict) set_m2p_slot(context, mfn, false);
  }
  const uint64_t old = bases.user_mfn;
  bases.user_mfn = mfn;
  if (old != 0) put_page_and_type(context.frames, old);
  context.effects.user_base_changed = true;
  return 0;
}

void request_invalidation(MmuEffects& effects, uint64_t address, bool all_vcpus) {
  effects.request_invlpg(address, all_vcpus);
}

constexpr bool is_tlb_operation(unsigned command) {
  switch (command) {
    case MMUEXT_TLB_FLUSH_LOCAL:
    case MMUEXT_INVLPG_LOCAL:
    case MMUEXT_TLB_FLUSH_MULTI:
    case MMUEXT_INVLPG_MULTI:
    case MMUEXT_TLB_FLUSH_ALL:
    case MMUEXT_INVLPG_ALL: return true;
    default: return false;
  }
}

}  // namespace

int mmuext_op(MmuContext& context, VcpuBasePointers& bases, const mmuext_op_t& op) {
  // Pins, unpins, base pointers and LDTs may change what a walk finds: cached walks must
  // not outlive them. Flushes and invalidations change only the TLB, which the cached
  // software walks do not stand for (emulate/translation_cache.h).
  if (!is_tlb_operation(op.cmd)) context.frames.walks_changed();
  switch (op.cmd) {
    case MMUEXT_PIN_L1_TABLE: return pin_table(context, op.arg1.mfn, PagingLevel::L1);
    case MMUEXT_PIN_L2_TABLE: return pin_table(context, op.arg1.mfn, PagingLevel::L2);
    case MMUEXT_PIN_L3_TABLE: return pin_table(context, op.arg1.mfn, PagingLevel::L3);
    case MMUEXT_PIN_L4_TABLE: return pin_table(context, op.arg1.mfn, PagingLevel::L4);
    case MMUEXT_UNPIN_TABLE: return unpin_table(context, op.arg1.mfn);
    case MMUEXT_NEW_BASEPTR: return new_kernel_base(context, bases, op.arg1.mfn);
    case MMUEXT_NEW_USER_BASEPTR: return new_user_base(context, bases, op.arg1.mfn);
    case MMUEXT_TLB_FLUSH_LOCAL: context.effects.flush_local_tlb = true; return 0;
    case MMUEXT_TLB_FLUSH_ALL: context.effects.flush_all_vcpu_tlbs = true; return 0;
    case MMUEXT_INVLPG_LOCAL: request_invalidation(context.effects, op.arg1.linear_addr, false); return 0;
    case MMUEXT_INVLPG_ALL: request_invalidation(context.effects, op.arg1.linear_addr, true); return 0;
    default: return error(XEN_ENOSYS);
  }
}

int mmuext_op_batch(MmuContext& context, VcpuBasePointers& bases, const mmuext_op_t* ops, unsigned count,
                    unsigned* done) {
  unsigned completed = 0;
  int rc = 0;
  while (completed < count) {
    rc = mmuext_op(context, bases, ops[completed]);
    if (rc != 0) break;
    ++completed;
  }
  if (done != nullptr) *done = completed;
  return rc;
}

void release_base_pointers(FrameTable& frames, VcpuBasePointers& bases) {
  if (bases.kernel_mfn != 0) put_page_and_type(frames, bases.kernel_mfn);
  if (bases.user_mfn != 0) put_page_and_type(frames, bases.user_mfn);
  bases = VcpuBasePointers{};
}

void unpin_all(FrameTable& frames, domid_t owner) {
  for (uint64_t mfn = 0; mfn < frames.size(); ++mfn) {
    PageInfo& page = frames.info(mfn);
    if (page.pinned() && page.owner() == owner && clear_pinned(page)) put_page_and_type(frames, mfn);
  }
}

}  // namespace mm
