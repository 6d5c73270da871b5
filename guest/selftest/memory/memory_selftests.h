#pragma once
// The self-tests of the PV MMU (selftest/memory/): page-type rules, plain-store writes to page
// tables and both ptwr paths, the writable-pagetable attacks, linear page tables, the TLB flush
// clock, the emulation caches, I/O memory, and guest frames the hypervisor writes.
#include <stdint.h>

#include "pv-kernel-patches/pv_ops.h"
#include "selftest/selftest.h"

namespace kernel {

void selftest_mmu(SelfTest& test);
void selftest_ptwrite(SelfTest& test);
void selftest_iomem(SelfTest& test);  // dom0: mappings of the interrupt hardware
// Writable-pagetable attacks (selftest_ptwr_hostile.cpp).
void selftest_ptwr_overlap(SelfTest& test);
void selftest_ptwr_alias(SelfTest& test);
void selftest_ptwr_links(SelfTest& test);
void selftest_ptwr_unlink(SelfTest& test);
// Guest frames the hypervisor writes, turned against it (selftest_hostile_frames.cpp).
void selftest_hostile_console_ring(SelfTest& test);
void selftest_hostile_store_ring(SelfTest& test);  // booted with xenbus=off
void selftest_hostile_guest_frames(SelfTest& test);
// Linear (recursive) page tables: a read-only self-map and Xen's refusals (selftest_linear_pt.cpp).
void selftest_linear_pt(SelfTest& test);
// A stale writable translation of a new page table (selftest_flush_clock.cpp).
void selftest_flush_clock(SelfTest& test);
// The guest-directed flushes that name vCPUs: *_MULTI, UVMF_MULTI, UVMF_ALL (selftest_flush_multi.cpp).
void selftest_flush_multi(SelfTest& test);
// The emulated write path's caches never serve a stale answer (selftest_emulation_caches.cpp).
void selftest_emulation_caches(SelfTest& test);
// The same with the stores on vCPU 1 and the changes on vCPU 0 (two CPUs).
void selftest_emulation_caches_smp(SelfTest& test);
// pvhv's ptwr-mode domctl (selftest_ptwr_mode.cpp): dom0 flips its own mode; a domU is refused.
void selftest_ptwr_mode(SelfTest& test);
// vCPUs of one domain racing each other on the PV MMU and event channels (selftest_hostile_smp.cpp).
void selftest_hostile_smp(SelfTest& test);

// Shared by the MMU checks (here and in selftest/control/): the L1 slot of a scratch page of the
// kernel image, and an mmu_update of it that must return `expected` (the slot is checked
// unchanged when refused and restored when accepted). In selftest_mmu.cpp.
pv::PageTableSlot scratch_slot();
uint64_t scratch_va();  // the page scratch_slot maps
void try_update(SelfTest& test, const char* what, const pv::PageTableSlot& slot, uint64_t value, long expected);

}  // namespace kernel
