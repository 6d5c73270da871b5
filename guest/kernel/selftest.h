#pragma once
#include <stdint.h>

#include "pv-kernel-patches/pv_ops.h"
// ABI self-tests selected with selftest=<name> on the kernel command line. Each check
// prints "selftest <name>: <check>: ok" or "... FAIL (got X expected Y)"; the run ends with
// "selftest <name>: passed" or "failed". Expected values are what Xen 4.17 does: that is
// the specification our hypervisor must match.

namespace kernel {

class SelfTest {
 public:
  explicit SelfTest(const char* name) : name_(name) {}
  // Compares a result (usually a hypercall return value) with the expected one.
  void check(const char* what, long got, long expected);
  void note(const char* what, long value);  // informational, never fails
  bool finish();

 private:
  const char* name_;
  int failures_ = 0;
};

// Runs the named self-test; false if the name is unknown.
bool selftest_run(const char* name);
// Runs each of a list joined with "+" (selftest=unprivileged+fpu; a comma would split QEMU's
// module list), reporting unknown names.
bool selftest_run_list(const char* names);

void selftest_hypercall(SelfTest& test);
void selftest_mmu(SelfTest& test);
void selftest_fault(SelfTest& test);
void selftest_ptwrite(SelfTest& test);
void selftest_tbuf(SelfTest& test);
void selftest_unprivileged(SelfTest& test);
void selftest_fpu(SelfTest& test);
void selftest_privop(SelfTest& test);
void selftest_swint(SelfTest& test);      // int $n, sysenter, virtual IOPL (selftest_swint.cpp)
void selftest_msr(SelfTest& test);        // the MSRs Xen serves a PV kernel (selftest_msr.cpp)
void selftest_ldt(SelfTest& test);        // MMUEXT_SET_LDT (selftest_ldt.cpp)
void selftest_ipi(SelfTest& test);        // EVTCHNOP_bind_ipi (selftest_ipi.cpp)
void selftest_debugreg(SelfTest& test);   // set_debugreg / get_debugreg (selftest_debugreg.cpp)
void selftest_time_area(SelfTest& test);  // VCPUOP_register_vcpu_time_memory_area (selftest_time_area.cpp)
void selftest_cpuid(SelfTest& test);
void selftest_gdt(SelfTest& test);
void selftest_vcpu_areas(
    SelfTest& test);  // runstate area and vcpu_info (selftest_vcpu_areas.cpp)  // set_gdt and update_descriptor
                      // (selftest_gdt.cpp)  // forced-emulation CPUID (selftest_cpuid.cpp)
void selftest_hostile_cpu(SelfTest& test);
// The groups of selftest_hostile_cpu, each runnable alone under its own name.
struct HostileGroup {
  const char* name;
  void (*run)(SelfTest&);
};
extern const HostileGroup hostile_cpu_groups[];
extern const unsigned hostile_cpu_group_count;
void selftest_hostile_iret_crash(SelfTest& test);
void selftest_hostile_privop_crash(SelfTest& test);
void selftest_ioports(SelfTest& test);  // dom0: wide port accesses over hypervisor ports
void selftest_iomem(SelfTest& test);    // dom0: mappings of the interrupt hardware
// Writable-pagetable attacks (selftest_ptwr_hostile.cpp).
void selftest_ptwr_overlap(SelfTest& test);
void selftest_ptwr_alias(SelfTest& test);
void selftest_ptwr_links(SelfTest& test);
void selftest_ptwr_unlink(SelfTest& test);
// Guest frames the hypervisor writes, turned against it (selftest_hostile_frames.cpp).
void selftest_hostile_console_ring(SelfTest& test);
void selftest_hostile_guest_frames(SelfTest& test);
// Linear (recursive) page tables: a read-only self-map and Xen's refusals (selftest_linear_pt.cpp).
void selftest_linear_pt(SelfTest& test);
// A stale writable translation of a new page table (selftest_flush_clock.cpp).
void selftest_flush_clock(SelfTest& test);
// The emulated write path's caches never serve a stale answer (selftest_emulation_caches.cpp).
void selftest_emulation_caches(SelfTest& test);
// The control hypercalls (selftest_domctl.cpp): dom0 alone, dom0 beside domain 1, a domU.
void selftest_domctl(SelfTest& test);
void selftest_domctl_domu(SelfTest& test);
void selftest_domctl_unprivileged(SelfTest& test);
void selftest_domctl_leave_paused(SelfTest& test);
// A domain's life (selftest_lifecycle.cpp): dom0 creates and destroys domains, destroys the
// boot domU while it runs; a boot domU is refused all of it.
void selftest_lifecycle(SelfTest& test);
void selftest_lifecycle_100(SelfTest& test);
void selftest_lifecycle_domu(SelfTest& test);
void selftest_lifecycle_unprivileged(SelfTest& test);
// pvhv's ptwr-mode domctl (selftest_ptwr_mode.cpp): dom0 flips its own mode; a domU is refused.
void selftest_ptwr_mode(SelfTest& test);

// The console's answers to hostile text (selftest_console.cpp): forged lines and escape
// sequences, and a flood of console_io and ring notifications (a domU).
void selftest_console_filter(SelfTest& test);
void selftest_console_flood(SelfTest& test);
// The FIFO event-channel ABI (selftest_evtchn_fifo.cpp); the kernel stays on FIFO after it.
void selftest_evtchn_fifo(SelfTest& test);

// Work across domains (selftest_xdom.cpp): dom0 alone, dom0 beside domain 1, domain 1.
void selftest_xdom_self(SelfTest& test);
void selftest_xdom_domu(SelfTest& test);
void selftest_xdom_peer(SelfTest& test);
void selftest_xdom_wait(SelfTest& test);

// Shared by the MMU checks: the L1 slot of a scratch page of the kernel image, and an
// mmu_update of it that must return `expected` (the slot is checked unchanged when refused
// and restored when accepted).
pv::PageTableSlot scratch_slot();
uint64_t scratch_va();  // the page scratch_slot maps
void try_update(SelfTest& test, const char* what, const pv::PageTableSlot& slot, uint64_t value, long expected);

}  // namespace kernel
