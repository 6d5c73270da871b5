// selftest=flush-multi: the guest-directed flushes that name vCPUs (xen.h: MMUEXT_TLB_FLUSH_MULTI,
// MMUEXT_INVLPG_MULTI, update_va_mapping's UVMF_MULTI with a bitmap pointer, and UVMF_ALL), the
// way a PV Linux shoots down TLBs.
//
// Each flush case leaves a writable translation of a data frame cached on purpose (a store
// through the direct map, then the entry made read-only by mmu_update, which invalidates
// nothing), makes the flush, and stores again: the store must fault. On ours the translation is
// first shown to be cached (the control: a store does not fault), and a bitmap that names no vCPU
// of the domain must leave it cached (the flush honours the bitmap). Xen 4.17's XPTI reloads CR3
// on every hypercall, so there the controls are only reported. Then the bad input, with Xen
// 4.17's answers: a bitmap that cannot be read is -EINVAL for mmuext_op and -EFAULT for
// update_va_mapping (whose update is made all the same), and
// a refused update's answer stands whatever the bitmap (as Xen 4.17 answers).
#include "arch/hypercall.h"
#include "arch/probe.h"
#include "arch/xen.h"
#include "kernel/boot/frames.h"
#include "kernel/memory/direct_map.h"
#include "kernel/memory/page_allocator.h"
#include "kernel/memory/physical_memory.h"
#include "kernel/measurement/pvhv.h"
#include "lib/linux_abi.h"
#include "selftest/memory/memory_selftests.h"
#include "selftest/selftest_page_tables.h"

namespace kernel {
namespace {
using namespace page_table_tests;

constexpr uint64_t kHypervisorAddress = 0xffff830000000000ull;  // never the guest's to read
constexpr uint64_t kUnmappedGuestAddress = 0x00007ff000000000ull;

bool is_ours() {
  pvhv_counters counters{};
  return read_pvhv_counters(counters) == 0;
}

long mmuext_multi(unsigned command, uint64_t address, uint64_t bitmap) {
  mmuext_op_t op{};
  op.cmd = command;
  op.arg1.linear_addr = address;
  set_xen_guest_handle(op.arg2.vcpumask, reinterpret_cast<const void*>(bitmap));
  return arch::hypercall(__HYPERVISOR_mmuext_op, reinterpret_cast<uint64_t>(&op), 1, 0, DOMID_SELF);
}

long update_va(uint64_t va, uint64_t value, uint64_t flags) {
  return arch::hypercall(__HYPERVISOR_update_va_mapping, va, value, flags);
}

// A data frame whose writable translation is cached while its entry says read-only.
struct StaleFrame {
  Pfn pfn;
  Mfn mfn;
  uint64_t va;
  volatile uint64_t* words;
  pv::PageTableSlot mapping;
};

StaleFrame leave_stale(SelfTest& test, bool ours) {
  StaleFrame frame{};
  frame.pfn = allocate_zeroed_frame();
  frame.mfn = pfn_to_mfn(frame.pfn);
  frame.va = pfn_to_va(frame.pfn);
  frame.words = reinterpret_cast<volatile uint64_t*>(frame.va);
  walk(kernel_l4(), frame.va, Level::l1, frame.mapping);
  test.check("  a store caches the writable translation", probe_store64(&frame.words[1], 1), 0);
  test.check("  mmu_update makes the entry read-only (no invalidation)",
             pv::ops.raw_mmu_update(frame.mapping.machine_address, entry(frame.mfn, kReadOnly)), 0);
  const long faulted = probe_store64(&frame.words[1], 2);
  if (ours)
    test.check("  control: the writable translation is still cached", faulted, 0);
  else
    test.note("  control: a store through it faulted", faulted);
  return frame;
}

void release(StaleFrame& frame) {
  (void)pv::ops.raw_mmuext(MMUEXT_TLB_FLUSH_LOCAL, 0);
  if (pv::ops.set_kernel_mapping(frame.va, PageTableEntry::make(frame.mfn, kWritable)) == 0)
    page_allocator.free(frame.pfn);
}

void expect_flushed(SelfTest& test, StaleFrame& frame) {
  test.check("  a store through it now faults", probe_store64(&frame.words[1], 3) != 0, true);
  release(frame);
}

void flushes(SelfTest& test, bool ours) {
  const uint64_t vcpu0 = 1;  // a bitmap naming vCPU 0, this one
  {
    test.note("MMUEXT_TLB_FLUSH_MULTI of vCPU 0", 1);
    StaleFrame frame = leave_stale(test, ours);
    test.check("  the flush", mmuext_multi(MMUEXT_TLB_FLUSH_MULTI, 0, reinterpret_cast<uint64_t>(&vcpu0)), 0);
    expect_flushed(test, frame);
  }
  {
    test.note("MMUEXT_INVLPG_MULTI of vCPU 0 at the frame's address", 2);
    StaleFrame frame = leave_stale(test, ours);
    test.check("  the invalidation", mmuext_multi(MMUEXT_INVLPG_MULTI, frame.va, reinterpret_cast<uint64_t>(&vcpu0)),
               0);
    expect_flushed(test, frame);
  }
  const uint64_t none = 0, beyond = uint64_t{1} << 63;  // no vCPU; only a vCPU id the domain cannot have
  const uint64_t* const bitmaps[] = {&none, &beyond};
  for (const uint64_t* bitmap : bitmaps) {
    test.note(bitmap == &none ? "MMUEXT_TLB_FLUSH_MULTI of no vCPU" : "MMUEXT_TLB_FLUSH_MULTI of vCPU 63 only", 3);
    StaleFrame frame = leave_stale(test, ours);
    test.check("  answered 0", mmuext_multi(MMUEXT_TLB_FLUSH_MULTI, 0, reinterpret_cast<uint64_t>(bitmap)), 0);
    const long faulted = probe_store64(&frame.words[1], 4);
    if (ours)
      test.check("  nothing flushed: the translation is still cached", faulted, 0);
    else
      test.note("  a store through it faulted", faulted);
    release(frame);
  }
  struct VaCase {
    const char* what;
    uint64_t flags;
  };
  const VaCase va_cases[] = {
      {"update_va_mapping, UVMF_INVLPG with a bitmap of vCPU 0", UVMF_INVLPG | reinterpret_cast<uint64_t>(&vcpu0)},
      {"update_va_mapping, UVMF_TLB_FLUSH with a bitmap of vCPU 0",
       UVMF_TLB_FLUSH | reinterpret_cast<uint64_t>(&vcpu0)},
      {"update_va_mapping, UVMF_INVLPG | UVMF_ALL", UVMF_INVLPG | UVMF_ALL},
      {"update_va_mapping, UVMF_TLB_FLUSH | UVMF_ALL", UVMF_TLB_FLUSH | UVMF_ALL},
  };
  for (const VaCase& va_case : va_cases) {
    test.note(va_case.what, 4);
    StaleFrame frame = leave_stale(test, ours);
    test.check("  the update (read-only again) and the flush",
               update_va(frame.va, entry(frame.mfn, kReadOnly), va_case.flags), 0);
    expect_flushed(test, frame);
  }
}

void bad_input(SelfTest& test) {
  const unsigned commands[] = {MMUEXT_TLB_FLUSH_MULTI, MMUEXT_INVLPG_MULTI};
  for (const unsigned command : commands) {
    const char* name = command == MMUEXT_TLB_FLUSH_MULTI ? "MMUEXT_TLB_FLUSH_MULTI" : "MMUEXT_INVLPG_MULTI";
    test.note(name, command);
    test.check("  a bitmap at a null pointer is -EINVAL", mmuext_multi(command, 0, 0), -XEN_EINVAL);
    test.check("  a bitmap in the hypervisor's range is -EINVAL", mmuext_multi(command, 0, kHypervisorAddress),
               -XEN_EINVAL);
    test.check("  a bitmap at an unmapped address is -EINVAL", mmuext_multi(command, 0, kUnmappedGuestAddress),
               -XEN_EINVAL);
  }
  Pfn pfn = allocate_zeroed_frame();
  Mfn mfn = pfn_to_mfn(pfn);
  const uint64_t va = pfn_to_va(pfn);
  pv::PageTableSlot mapping;
  walk(kernel_l4(), va, Level::l1, mapping);
  auto* slot = reinterpret_cast<volatile uint64_t*>(mfn_to_va(Mfn{mapping.machine_address >> 12})) +
               (mapping.machine_address & 0xfff) / 8;
  test.check("update_va_mapping with a bitmap in the hypervisor's range is -EFAULT",
             update_va(va, entry(mfn, kReadOnly), UVMF_TLB_FLUSH | kHypervisorAddress), -XEN_EFAULT);
  test.check("  the update was made all the same", (*slot & (PageTableEntry::kWritable | PageTableEntry::kPresent)),
             PageTableEntry::kPresent);
  test.check("  with an unmapped bitmap, -EFAULT",
             update_va(va, entry(mfn, kWritable), UVMF_INVLPG | kUnmappedGuestAddress), -XEN_EFAULT);
  test.check("  the update was made all the same", (*slot & PageTableEntry::kWritable) != 0, true);
  const uint64_t vcpu0 = 1;
  test.check("a refused update (the kernel's L4 mapped writable), UVMF_INVLPG: -EBUSY",
             update_va(va, entry(kernel_l4(), kWritable), UVMF_INVLPG), -XEN_EBUSY);
  test.check("  with a bitmap that reads, the update's answer still",
             update_va(va, entry(kernel_l4(), kWritable), UVMF_INVLPG | reinterpret_cast<uint64_t>(&vcpu0)),
             -XEN_EBUSY);
  test.check("  with a bitmap that does not, the update's answer too",
             update_va(va, entry(kernel_l4(), kWritable), UVMF_INVLPG | kUnmappedGuestAddress), -XEN_EBUSY);
  test.check("  and nothing changed (the frame's own entry, writable)",
             ((*slot >> 12) & ((uint64_t{1} << 40) - 1)) == mfn.value && (*slot & PageTableEntry::kWritable) != 0,
             true);
  test.check("a flush type of 3 asks for no flush: the update is made, 0",
             update_va(va, entry(mfn, kReadOnly), UVMF_FLUSHTYPE_MASK), 0);
  test.check("  read-only now", (*slot & PageTableEntry::kWritable), 0);
  (void)pv::ops.raw_mmuext(MMUEXT_TLB_FLUSH_LOCAL, 0);
  if (pv::ops.set_kernel_mapping(va, PageTableEntry::make(mfn, kWritable)) == 0) page_allocator.free(pfn);
}
}  // namespace

void selftest_flush_multi(SelfTest& test) {
  const bool ours = is_ours();
  flushes(test, ours);
  bad_input(test);
  check_audit(test);
}
}  // namespace kernel
