#pragma once
#include "mm/xen_abi.h"

namespace mm {

// Hardware work an operation requires. Pure code never touches CR3 or the TLB: it records
// what must happen and the hypervisor glue does it before returning to the guest.
struct MmuEffects {
    // A frame changed type (e.g. writable data became a page table). Stale TLB and
    // paging-structure-cache entries for it may exist on every CPU that ran this domain,
    // so those CPUs must flush before the guest runs again (Xen flushes the dirty cpumask).
    bool flush_domain_tlbs = false;
    // Guest asked for flushes (MMUEXT_TLB_FLUSH_* / MMUEXT_INVLPG_*).
    bool flush_local_tlb = false;
    bool flush_all_vcpu_tlbs = false;
    bool invalidate_page_local = false;
    bool invalidate_page_all_vcpus = false;
    uint64_t invalidate_address = 0;
    // MMUEXT_NEW_BASEPTR succeeded: load the vCPU's new kernel base into CR3 (this flushes).
    bool load_kernel_base = false;
    // MMUEXT_NEW_USER_BASEPTR succeeded: the next switch to guest user mode uses the new one.
    bool user_base_changed = false;
    // An L4 entry changed (glue keeping per-CPU copies of guest L4s must resynchronise).
    bool l4_entry_changed = false;
    // An L2-L4 entry that linked a table was removed or replaced. Until the TLB is flushed,
    // its paging-structure caches may still walk the table through it, so the table is not
    // yet unreachable: the writable-pagetable path must flush before it relies on that.
    bool table_unlinked = false;

    void merge(const MmuEffects& other);
    // One page to invalidate; a second, different page escalates to a full flush, so no
    // requested invalidation is ever lost.
    void request_invlpg(uint64_t address, bool all_vcpus);
};

inline void MmuEffects::request_invlpg(uint64_t address, bool all_vcpus) {
    bool pending = invalidate_page_local || invalidate_page_all_vcpus;
    if (pending && invalidate_address != address) {
        if (all_vcpus || invalidate_page_all_vcpus) flush_all_vcpu_tlbs = true;
        else flush_local_tlb = true;
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
