#pragma once
#include "abi/xen_abi.h"

namespace mm {

// Hardware work an operation requires. Pure code never touches CR3 or the TLB: it records
// what must happen and the hypervisor glue does it before returning to the guest.
struct MmuEffects {
  // One bit each, in one word, so that any() tests them all at once (unsigned one-bit
  // fields: GCC tests bool bit-fields one by one). Each reads as 0 or 1, as a bool would.
  // A frame changed type (e.g. writable data became a page table). Stale TLB and
  // paging-structure-cache entries for it may exist on every CPU that ran this domain,
  // so those CPUs must flush before the guest runs again (Xen flushes the dirty cpumask).
  unsigned flush_domain_tlbs : 1 = false;
  // Guest asked for flushes (MMUEXT_TLB_FLUSH_* / MMUEXT_INVLPG_*).
  unsigned flush_local_tlb : 1 = false;
  unsigned flush_all_vcpu_tlbs : 1 = false;
  unsigned invalidate_page_local : 1 = false;
  unsigned invalidate_page_all_vcpus : 1 = false;
  // MMUEXT_NEW_BASEPTR succeeded: load the vCPU's new kernel base into CR3 (this flushes).
  unsigned load_kernel_base : 1 = false;
  // MMUEXT_NEW_USER_BASEPTR succeeded: the next switch to guest user mode uses the new one.
  unsigned user_base_changed : 1 = false;
  // An L4 entry changed (glue keeping per-CPU copies of guest L4s must resynchronise).
  unsigned l4_entry_changed : 1 = false;
  // An L2-L4 entry that linked a table was removed or replaced. Until the TLB is flushed,
  // its paging-structure caches may still walk the table through it, so the table is not
  // yet unreachable: the writable-pagetable path must flush before it relies on that.
  unsigned table_unlinked : 1 = false;
  uint64_t invalidate_address = 0;  // of invalidate_page_*

  // Whether anything is asked at all: most single PTE writes ask nothing, and their glue
  // then skips the hardware step (and its trace site) entirely.
  constexpr bool any() const {
    return flush_domain_tlbs || flush_local_tlb || flush_all_vcpu_tlbs || invalidate_page_local ||
           invalidate_page_all_vcpus || load_kernel_base || user_base_changed || l4_entry_changed || table_unlinked;
  }

  void merge(const MmuEffects& other);
  // One page to invalidate; a second, different page escalates to a full flush, so no
  // requested invalidation is ever lost.
  void request_invlpg(uint64_t address, bool all_vcpus);
};

inline void MmuEffects::request_invlpg(uint64_t address, bool all_vcpus) {
  bool pending = invalidate_page_local || invalidate_page_all_vcpus;
  if (pending && invalidate_address != address) {
    if (all_vcpus || invalidate_page_all_vcpus)
      flush_all_vcpu_tlbs = true;
    else
      flush_local_tlb = true;
  }
  (all_vcpus ? invalidate_page_all_vcpus : invalidate_page_local) = true;
  invalidate_address = address;
}

inline void MmuEffects::merge(const MmuEffects& other) {
  flush_domain_tlbs |= other.flush_domain_tlbs;
  flush_local_tlb |= other.flush_local_tlb;
  flush_all_vcpu_tlbs |= other.flush_all_vcpu_tlbs;
  if (other.invalidate_page_local || other.invalidate_page_all_vcpus)
    request_invlpg(other.invalidate_address, other.invalidate_page_all_vcpus);
  load_kernel_base |= other.load_kernel_base;
  user_base_changed |= other.user_base_changed;
  l4_entry_changed |= other.l4_entry_changed;
  table_unlinked |= other.table_unlinked;
}

}  // namespace mm
