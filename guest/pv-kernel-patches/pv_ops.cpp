#include "pv-kernel-patches/pv_ops.h"

#include "arch/xen.h"
#include "kernel/console/panic.h"
#include "pv-kernel-patches/shared_info.h"

#include <stddef.h>
#include "lib/cmdline.h"

namespace pv {

PvOps ops;

const char* pte_mode_name(PteMode mode) {
  switch (mode) {
    case PteMode::hypercall: return "hypercall";
    case PteMode::batched: return "batched";
    case PteMode::direct: return "direct";
  }
  return "?";
}

bool parse_pte_mode(const char* text, PteMode& mode) {
  static constexpr PteMode kModes[] = {PteMode::hypercall, PteMode::batched, PteMode::direct};
  for (PteMode candidate : kModes) {
    if (lib::string_equal(text, pte_mode_name(candidate))) {
      mode = candidate;
      return true;
    }
  }
  return false;
}

long PvOps::mmu_update_now(const PageTableSlot& slot, PageTableEntry value) {
  mmu_update_t request{slot.machine_address | MMU_NORMAL_PT_UPDATE, value.raw()};
  ++hypercalls_;
  return arch::hypercall(__HYPERVISOR_mmu_update, arch::arg(&request), 1, 0, DOMID_SELF);
}

static_assert(sizeof(multicall_entry_like) == sizeof(multicall_entry_t));
static_assert(offsetof(multicall_entry_like, result) == offsetof(multicall_entry_t, result));
static_assert(offsetof(multicall_entry_like, args) == offsetof(multicall_entry_t, args));
static_assert(sizeof(PvOps::ExtRequestLayout) == sizeof(mmuext_op_t));

multicall_entry_like* PvOps::new_call(unsigned op) {
  if (calls_ == kCallCapacity && flush() < 0) return nullptr;
  open_update_ = nullptr;
  multicall_entry_like* call = &call_[calls_++];
  *call = multicall_entry_like{op, 0, {}};
  return call;
}

// Consecutive entries share one mmu_update call of the multicall (its request array grows:
// set_entry appends to open_update_); this starts a call, flushing first when full.
long PvOps::queue(const PageTableSlot& slot, PageTableEntry value) {
  static_assert(kNormalPtUpdate == MMU_NORMAL_PT_UPDATE);
  if (queued_ == kBatchCapacity) {
    long rc = flush();
    if (rc < 0) return rc;
  }
  multicall_entry_like* call = new_call(__HYPERVISOR_mmu_update);
  if (call == nullptr) return -XEN_ENOMEM;
  Request* request = &batch_[queued_++];  // after new_call, which may have flushed
  *request = Request{slot.machine_address | MMU_NORMAL_PT_UPDATE, value.raw()};
  call->args[0] = arch::arg(request);
  call->args[1] = 1;
  call->args[2] = 0;
  call->args[3] = DOMID_SELF;
  open_update_ = call;
  return 0;
}

long PvOps::queue_mmuext(unsigned command, uint64_t argument) {
  if (ext_queued_ == kExtCapacity) {
    long rc = flush();
    if (rc < 0) return rc;
  }
  ExtRequest* request = &ext_[ext_queued_++];
  *request = ExtRequest{command, argument, 0};
  multicall_entry_like* last = calls_ > 0 ? &call_[calls_ - 1] : nullptr;
  if (last != nullptr && last->op == __HYPERVISOR_mmuext_op &&
      last->args[0] + last->args[1] * sizeof(ExtRequest) == arch::arg(request)) {
    ++last->args[1];
    return 0;
  }
  multicall_entry_like* call = new_call(__HYPERVISOR_mmuext_op);
  if (call == nullptr) return -XEN_ENOMEM;
  if (ext_queued_ == 0) request = &ext_[ext_queued_++];
  *request = ExtRequest{command, argument, 0};
  call->args[0] = arch::arg(request);
  call->args[1] = 1;
  call->args[2] = 0;
  call->args[3] = DOMID_SELF;
  return 0;
}

long PvOps::queue_va_mapping(uint64_t va, PageTableEntry value) {
  multicall_entry_like* call = new_call(__HYPERVISOR_update_va_mapping);
  if (call == nullptr) return -XEN_ENOMEM;
  call->args[0] = va;
  call->args[1] = value.raw();
  call->args[2] = UVMF_INVLPG | UVMF_LOCAL;
  return 0;
}

long PvOps::lazy_end() {
  if (lazy_depth_ > 0 && --lazy_depth_ > 0) return 0;
  return flush();
}

LazyMmu::LazyMmu() { ops.lazy_begin(); }
LazyMmu::~LazyMmu() {
  long rc = ops.lazy_end();
  if (rc < 0) kernel::panic("lazy MMU flush: %ld", rc);
}

long PvOps::set_entry_other(const PageTableSlot& slot, PageTableEntry value) {
  ++entries_;
  // Batched: the first entry of a new mmu_update call. Otherwise one hypercall: every entry in
  // hypercall mode, L2-L4 entries in direct mode (set_entry stores L1s itself).
  if (mode_ == PteMode::batched) return queue(slot, value);
  return mmu_update_now(slot, value);
}

long PvOps::flush() {
  if (calls_ == 0) return 0;
  // One multicall for everything queued: the batch costs a single guest/hypervisor
  // transition however many entries it carries.
  unsigned count = calls_;
  calls_ = queued_ = ext_queued_ = 0;
  open_update_ = nullptr;
  ++hypercalls_;
  long rc = arch::hypercall(__HYPERVISOR_multicall, arch::arg(call_), count);
  if (rc < 0) return rc;
  for (unsigned i = 0; i < count; ++i) {
    if (static_cast<long>(call_[i].result) < 0) return static_cast<long>(call_[i].result);
  }
  return 0;
}

long PvOps::mmuext(unsigned command, uint64_t argument) {
  if (queueing_all()) return queue_mmuext(command, argument);
  long rc = flush();  // a pin or base-pointer switch must see every earlier entry
  if (rc < 0) return rc;
  return raw_mmuext(command, argument);
}

long PvOps::raw_mmuext(unsigned command, uint64_t argument) {
  mmuext_op_t op{};
  op.cmd = command;
  op.arg1.mfn = argument;  // arg1 is a union of mfn and linear_addr
  ++hypercalls_;
  return arch::hypercall(__HYPERVISOR_mmuext_op, arch::arg(&op), 1, 0, DOMID_SELF);
}

long PvOps::raw_mmu_update(uint64_t machine_address, uint64_t value) {
  mmu_update_t request{machine_address | MMU_NORMAL_PT_UPDATE, value};
  ++hypercalls_;
  return arch::hypercall(__HYPERVISOR_mmu_update, arch::arg(&request), 1, 0, DOMID_SELF);
}

long PvOps::pin(Level level, Mfn table) {
  static constexpr unsigned kPinCommand[] = {0, MMUEXT_PIN_L1_TABLE, MMUEXT_PIN_L2_TABLE, MMUEXT_PIN_L3_TABLE,
                                             MMUEXT_PIN_L4_TABLE};
  return mmuext(kPinCommand[static_cast<int>(level)], table.value);
}

long PvOps::unpin(Mfn table) { return mmuext(MMUEXT_UNPIN_TABLE, table.value); }
long PvOps::set_kernel_base(Mfn l4) { return mmuext(MMUEXT_NEW_BASEPTR, l4.value); }
long PvOps::set_user_base(Mfn l4) { return mmuext(MMUEXT_NEW_USER_BASEPTR, l4.value); }
long PvOps::flush_tlb() { return mmuext(MMUEXT_TLB_FLUSH_LOCAL, 0); }
long PvOps::invalidate_page(uint64_t va) { return mmuext(MMUEXT_INVLPG_LOCAL, va); }

long PvOps::map_foreign(const PageTableSlot& slot, PageTableEntry value, uint16_t owner) {
  long rc = flush();
  if (rc < 0) return rc;
  mmu_update_t request{slot.machine_address | MMU_NORMAL_PT_UPDATE, value.raw()};
  ++hypercalls_;
  return arch::hypercall(__HYPERVISOR_mmu_update, arch::arg(&request), 1, 0, owner);
}

long PvOps::set_kernel_mapping(uint64_t va, PageTableEntry value) {
  if (queueing_all()) return queue_va_mapping(va, value);
  long rc = flush();
  if (rc < 0) return rc;
  ++hypercalls_;
  return arch::hypercall(__HYPERVISOR_update_va_mapping, va, value.raw(), UVMF_INVLPG | UVMF_LOCAL);
}

void PvOps::disable_events() {
  kernel::vcpu()->evtchn_upcall_mask = 1;
  asm volatile("" ::: "memory");
}

void PvOps::enable_events() {
  vcpu_info_t* vcpu = kernel::vcpu();
  asm volatile("" ::: "memory");
  vcpu->evtchn_upcall_mask = 0;
  asm volatile("" ::: "memory");
  // An event that arrived while masked is only delivered on the next exit from the
  // hypervisor: make one (any cheap hypercall will do).
  if (vcpu->evtchn_upcall_pending) xen::xen_version(XENVER_version, nullptr);
}

bool PvOps::events_enabled() const { return kernel::vcpu()->evtchn_upcall_mask == 0; }

long PvOps::set_kernel_stack(uint64_t stack_top) {
  ++hypercalls_;
  return arch::hypercall(__HYPERVISOR_stack_switch, FLAT_KERNEL_SS, stack_top);
}

long PvOps::set_user_fs_base(uint64_t base) {
  ++hypercalls_;
  return arch::hypercall(__HYPERVISOR_set_segment_base, SEGBASE_FS, base);
}

void PvOps::return_to_user(kernel::TrapFrame* frame) {
  flush();
  resume_frame(frame);  // ends in HYPERVISOR_iret (arch/entry.S)
}

}  // namespace pv
