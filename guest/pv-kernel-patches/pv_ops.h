#pragma once
// The paravirtualization layer: every operation through which the kernel touches page
// tables, the CPU's privileged state or event delivery goes through PvOps (in the spirit of
// Linux's pv-ops). The Xen PV implementation can write page-table entries three ways:
//
//   hypercall  one mmu_update per entry (every write validated immediately)
//   batched    entries are queued and committed together in one multicall. Inside a lazy
//              section (LazyMmu, like Linux's lazy MMU mode) base-pointer, pin, TLB and
//              kernel-mapping operations are queued too, so a whole fork or exit costs one
//              multicall.
//   direct     L1 entries are written with a plain store to the read-only mapping of the
//              table; the hypervisor traps and emulates the write. Higher levels still use
//              mmu_update (Xen emulates writes to L1 tables only).
//
// Reads of page tables are always plain loads: tables stay mapped read-only in the kernel.
#include <stdint.h>

#include "arch/trap_frame.h"
#include "lib/page_table_entry.h"

namespace pv {

using lib::Level;
using lib::Mfn;
using lib::PageTableEntry;

enum class PteMode { hypercall, batched, direct };

// Layout of Xen's multicall_entry_t (xen.h), kept here so this header needs no Xen headers.
struct multicall_entry_like {
  uint64_t op;
  uint64_t result;
  uint64_t args[6];
};

const char* pte_mode_name(PteMode mode);
// Parses "hypercall" / "batched" / "direct"; false if unknown.
bool parse_pte_mode(const char* text, PteMode& mode);

// One slot of a page table: where it is for the hypervisor (machine address) and where the
// kernel sees it (virtual address of its read-only mapping).
struct PageTableSlot {
  uint64_t machine_address;
  volatile uint64_t* kernel_va;
  Level level;
};

class PvOps {
 public:
  void set_mode(PteMode mode) {
    mode_ = mode;
    open_update_ = nullptr;  // only batched mode appends to it
  }
  PteMode mode() const { return mode_; }

  // Page tables. Return 0 or a negative Xen errno; callers that cannot recover panic.
  // Inline for the two common cases: a batched entry joins the open mmu_update call (a fork
  // queues one per entry it copies, tens of thousands for a dirty parent), and a direct L1
  // entry is a plain store to the table's read-only mapping, which the hypervisor traps.
  long set_entry(const PageTableSlot& slot, PageTableEntry value) {
    if (open_update_ != nullptr && queued_ < kBatchCapacity) [[likely]] {
      ++entries_;
      batch_[queued_++] = Request{slot.machine_address | kNormalPtUpdate, value.raw()};
      ++open_update_->args[1];
      return 0;
    }
    if (mode_ == PteMode::direct && slot.level == Level::l1) {
      ++entries_;
      *slot.kernel_va = value.raw();
      return 0;
    }
    return set_entry_other(slot, value);
  }
  long flush();  // commits queued (batched) operations; a no-op otherwise
  // Lazy sections (nestable). In batched mode every MMU operation is queued until the
  // outermost section ends, which flushes. Nothing inside may read a table it changed.
  void lazy_begin() { ++lazy_depth_; }
  long lazy_end();
  long pin(Level level, Mfn table);
  long unpin(Mfn table);
  long set_kernel_base(Mfn l4);  // switch the kernel's own address space (MMUEXT_NEW_BASEPTR)
  long set_user_base(Mfn l4);    // the L4 Xen switches to on return to user mode
  long flush_tlb();
  long invalidate_page(uint64_t va);
  // Changes the kernel's own mapping of va and invalidates it, in one step.
  long set_kernel_mapping(uint64_t va, PageTableEntry value);
  // Maps a frame owned by `owner` (another domain, or DOMID_XEN for the hypervisor pages it
  // shares with privileged domains, such as the trace buffers) into `slot`, as Xen's dom0
  // does: an mmu_update naming the owner as foreigndom. Always a hypercall, whatever the
  // mode: a direct write cannot say whose frame it maps. The slot must be empty (no flush).
  long map_foreign(const PageTableSlot& slot, PageTableEntry value, uint16_t owner);  // a domid_t

  // Event delivery (the PV equivalent of cli/sti).
  void disable_events();
  void enable_events();
  bool events_enabled() const;

  // CPU state for user mode.
  long set_kernel_stack(uint64_t stack_top);  // used on every transition from user mode
  long set_user_fs_base(uint64_t base);
  [[noreturn]] void return_to_user(kernel::TrapFrame* frame);

  // Raw access for the ABI self-tests: exactly one hypercall, no queueing, no retries.
  long raw_mmu_update(uint64_t machine_address, uint64_t value);
  long raw_mmuext(unsigned command, uint64_t argument);

  unsigned long hypercalls_issued() const { return hypercalls_; }
  struct alignas(8) ExtRequestLayout {
    unsigned int cmd;
    uint64_t arg1;
    uint64_t arg2;
  };
  unsigned long entries_written() const { return entries_; }

 private:
  long set_entry_other(const PageTableSlot& slot, PageTableEntry value);
  long mmu_update_now(const PageTableSlot& slot, PageTableEntry value);
  long queue(const PageTableSlot& slot, PageTableEntry value);
  long queue_mmuext(unsigned command, uint64_t argument);
  long queue_va_mapping(uint64_t va, PageTableEntry value);
  multicall_entry_like* new_call(unsigned op);
  bool queueing_all() const { return mode_ == PteMode::batched && lazy_depth_ > 0; }
  long mmuext(unsigned command, uint64_t argument);

  static constexpr unsigned kBatchCapacity = 1024;  // page-table entries per flush
  static constexpr unsigned kExtCapacity = 64;      // mmuext operations per flush
  static constexpr unsigned kCallCapacity = 512;    // multicall entries per flush
  PteMode mode_ = PteMode::hypercall;
  unsigned lazy_depth_ = 0;
  unsigned queued_ = 0;      // entries in batch_
  unsigned ext_queued_ = 0;  // entries in ext_
  unsigned calls_ = 0;       // entries in calls_
  // The last call of call_ while it is an mmu_update whose requests end at batch_[queued_]
  // (the next request can join it); null otherwise.
  multicall_entry_like* open_update_ = nullptr;
  static constexpr uint64_t kNormalPtUpdate = 0;  // MMU_NORMAL_PT_UPDATE (xen.h)
  unsigned long hypercalls_ = 0;
  unsigned long entries_ = 0;
  struct alignas(8) Request {
    uint64_t ptr;
    uint64_t val;
  } batch_[kBatchCapacity];
  using ExtRequest = ExtRequestLayout;  // mmuext_op_t
  ExtRequest ext_[kExtCapacity];
  multicall_entry_like call_[kCallCapacity];
};

// Brackets a lazy section (see PvOps::lazy_begin).
class LazyMmu {
 public:
  LazyMmu();
  ~LazyMmu();
  LazyMmu(const LazyMmu&) = delete;
  LazyMmu& operator=(const LazyMmu&) = delete;
};

extern PvOps ops;

}  // namespace pv
