// selftest=ptwr-mode: pvhv's per-domain ptwr-mode domctl (common/xen/pvhv_domctl.h) from the
// kernel, privileged or not. The number is outside Xen's: Xen 4.17 answers a privileged
// caller -ENOSYS (arch_do_domctl's default), and the note "served" says which case ran (the
// integration test requires 1 on ours, 0 on Xen 4.17).
//
// In dom0 (privileged), with do_domctl's order checked first (a stale interface version
// -EACCES, a domain that does not exist -ESRCH, a bad pointer -EFAULT), then on ours:
//  - garbage: an unknown op, an unknown mode, reserved fields set: -EINVAL, the mode unchanged;
//  - the mode of itself flipped several times, each phase writing one entry of a scratch L1
//    with plain stores (pte=direct for the length of the phase): while emulate, the
//    hypervisor's counters show emulations and no detach; while writable, detaches; leaving
//    writable rehooks what is detached (the frame audit is clean after every flip);
//  - the mode restored to the boot one, the hypervisor's free pages back where they were.
//  - the PVHV note op (what libxenguest sends for a kernel with the note) on itself, running:
//    bad flags -EINVAL, a valid one -EEXIST; Xen 4.17: -ENOSYS;
// In a domU (unprivileged, run on both through `xl create`): the same domctl on dom0 is -EPERM,
// on a domain that does not exist -ESRCH (looked up before the XSM check), with a stale
// version -EACCES: never served.
#define __XEN_TOOLS__ 1  // domctl.h is the tools' interface (guest handles need it)
#include <stdint.h>
#include <xen/xen.h>
#include <xen/domctl.h>

#include "arch/xen.h"
#include "common/xen/pvhv_domctl.h"
#include "kernel/boot/boot_info.h"
#include "arch/control.h"
#include "kernel/memory/direct_map.h"
#include "kernel/memory/page_allocator.h"
#include "kernel/memory/physical_memory.h"
#include "kernel/measurement/pvhv.h"
#include "selftest/memory/memory_selftests.h"

namespace kernel {
namespace {
namespace abi = pvhv::xen_abi;
constexpr domid_t kAbsent = 4000;       // no domain has this id in these tests
constexpr uint64_t kBadPointer = 0x10;  // never mapped
constexpr uint64_t kWritesPerPhase = 64;

// The request as a toolstack makes it; `mode` gets the answer's.
long ptwr_mode_call(domid_t domain, uint32_t op, uint32_t& mode, uint64_t reserved = 0,
                    uint32_t version = XEN_DOMCTL_INTERFACE_VERSION) {
  xen_domctl_t request = control::domctl_request(abi::kDomctlPtwrMode, domain);
  request.interface_version = version;
  abi::DomctlPtwrMode body{op, mode, {reserved, 0}};
  __builtin_memcpy(request.u.pad, &body, sizeof(body));
  long rc = control::domctl(request);
  __builtin_memcpy(&body, request.u.pad, sizeof(body));
  mode = body.mode;
  return rc;
}

long get_mode(domid_t domain) {
  uint32_t mode = 0xdead;
  long rc = ptwr_mode_call(domain, abi::kPtwrModeGet, mode);
  return rc < 0 ? rc : long(mode);
}

long set_mode(domid_t domain, uint32_t wanted) {
  uint32_t mode = wanted;
  long rc = ptwr_mode_call(domain, abi::kPtwrModeSet, mode);
  return rc < 0 ? rc : long(mode);
}

void admission(SelfTest& test, bool privileged) {
  uint32_t mode = 0;
  test.check("a stale interface version: -EACCES",
             ptwr_mode_call(0, abi::kPtwrModeGet, mode, 0, XEN_DOMCTL_INTERFACE_VERSION - 1), -XEN_EACCES);
  test.check("a domain that does not exist: -ESRCH", get_mode(kAbsent), -XEN_ESRCH);
  test.check("DOMID_SELF is no domain for domctl: -ESRCH", get_mode(DOMID_SELF), -XEN_ESRCH);
  test.check("a request that cannot be read: -EFAULT", control::domctl_at(kBadPointer), -XEN_EFAULT);
  if (privileged) return;
  test.check("get dom0's mode from a domU: -EPERM", get_mode(0), -XEN_EPERM);
  test.check("set dom0 writable from a domU: -EPERM", set_mode(0, abi::kPtwrWritable), -XEN_EPERM);
  test.check("set dom0 emulate from a domU: -EPERM", set_mode(0, abi::kPtwrEmulate), -XEN_EPERM);
  test.check("set dom0 adaptive from a domU: -EPERM", set_mode(0, abi::kPtwrAdaptive), -XEN_EPERM);
  test.check("garbage from a domU is still -EPERM first", ptwr_mode_call(0, 77, mode, 5), -XEN_EPERM);
  mode = 1;
  test.check("dom0's PVHV note set from a domU: -EPERM", ptwr_mode_call(0, abi::kPtwrReadsUnhookedSet, mode),
             -XEN_EPERM);
  mode = 1;
  test.check("the PVHV note of a domain that does not exist: -ESRCH",
             ptwr_mode_call(kAbsent, abi::kPtwrReadsUnhookedSet, mode), -XEN_ESRCH);
}

// The builder's PVHV note (kPtwrReadsUnhookedSet) sent for dom0, a running domain: bad flags
// and reserved fields -EINVAL first, then -EEXIST (Xen's answer once creation_finished).
void pvhv_note_too_late(SelfTest& test) {
  uint32_t mode = 2;
  test.check("the PVHV note with flag 2: -EINVAL", ptwr_mode_call(0, abi::kPtwrReadsUnhookedSet, mode), -XEN_EINVAL);
  mode = 0xffffffff;
  test.check("the PVHV note with flag ~0: -EINVAL", ptwr_mode_call(0, abi::kPtwrReadsUnhookedSet, mode), -XEN_EINVAL);
  mode = 1;
  test.check("the PVHV note with reserved fields set: -EINVAL", ptwr_mode_call(0, abi::kPtwrReadsUnhookedSet, mode, 1),
             -XEN_EINVAL);
  static const uint32_t kFlags[] = {0, 1};
  for (uint32_t flag : kFlags) {
    mode = flag;
    test.check(flag ? "the PVHV note (reads) for a running domain: -EEXIST"
                    : "the PVHV note (does not read) for a running domain: -EEXIST",
               ptwr_mode_call(0, abi::kPtwrReadsUnhookedSet, mode), -XEN_EEXIST);
  }
}

void garbage(SelfTest& test, long boot_mode) {
  uint32_t mode = abi::kPtwrWritable;
  test.check("an unknown op: -EINVAL", ptwr_mode_call(0, 2, mode), -XEN_EINVAL);
  mode = 3;
  test.check("an unknown mode: -EINVAL", ptwr_mode_call(0, abi::kPtwrModeSet, mode), -XEN_EINVAL);
  mode = 0xffffffff;
  test.check("mode ~0: -EINVAL", ptwr_mode_call(0, abi::kPtwrModeSet, mode), -XEN_EINVAL);
  mode = abi::kPtwrWritable;
  test.check("reserved fields set: -EINVAL", ptwr_mode_call(0, abi::kPtwrModeSet, mode, 1), -XEN_EINVAL);
  test.check("  the mode is unchanged", get_mode(0), boot_mode);
}

struct Phase {
  uint64_t emulations, detaches, rehooks;
};

// The counters around `kWritesPerPhase` plain-store writes of a scratch L1 entry.
Phase write_phase() {
  pvhv_counters before{}, after{};
  read_pvhv_counters(before);
  const pv::PteMode kernel_mode = pv::ops.mode();
  pv::ops.set_mode(pv::PteMode::direct);
  sys_pvhv_pte_bench(kWritesPerPhase);
  pv::ops.set_mode(kernel_mode);
  read_pvhv_counters(after);
  return {after.emulations - before.emulations, after.detaches - before.detaches, after.rehooks - before.rehooks};
}

uint64_t detaches_now() {
  pvhv_counters now{};
  read_pvhv_counters(now);
  return now.detaches;
}

// Leaving writable while an L1 is detached (a plain store, and no MMU hypercall since to
// reattach it): the switch itself must reattach it before the mode changes.
void switch_with_a_table_detached(SelfTest& test) {
  set_mode(0, abi::kPtwrWritable);
  Pfn scratch = allocate_zeroed_frame();
  Mfn table = new_page_table_frame();
  test.check("pin a scratch L1", pv::ops.pin(Level::l1, table), 0);
  auto slot = table_slot(table, 0, Level::l1);
  const auto entry = PageTableEntry::make(pfn_to_mfn(scratch), PageTableEntry::kPresent | PageTableEntry::kAccessed);
  pvhv_counters before{}, after{};
  read_pvhv_counters(before);
  const uint64_t detaches = before.detaches;
  // The first plain store to a table may be emulated (the hypervisor's heuristics): stores of
  // alternating values until one detaches it, the last one valid.
  const PageTableEntry values[2] = {PageTableEntry(), entry};
  long stores = 0;
  while (detaches_now() == detaches && stores < 16) *slot.kernel_va = values[++stores & 1].raw();
  if ((stores & 1) == 0) *slot.kernel_va = entry.raw();  // detached already: a plain write
  test.check("  plain stores to it detach it", long(detaches_now() - detaches), 1);
  test.note("  stores until the detach", stores);
  read_pvhv_counters(before);
  test.check("back to emulate with it detached", set_mode(0, abi::kPtwrEmulate), long(abi::kPtwrEmulate));
  read_pvhv_counters(after);
  test.check("  the switch reattached it", long(after.rehooks - before.rehooks), 1);
  const PageTableEntry kept = read_entry(slot);  // validated: the hypervisor may add its own bits
  test.check("  and kept the entry written", long(kept.present() && kept.mfn().value == entry.mfn().value), 1);
  test.check("  the audit is clean (no table left writable)", sys_pvhv_audit(), 0);
  *reinterpret_cast<volatile uint64_t*>(slot.kernel_va) = 0;  // emulated now
  test.check("  a store now is emulated, not detached", long(detaches_now() - after.detaches), 0);
  test.check("unpin it", pv::ops.unpin(table), 0);
  constexpr uint64_t kWritableData =
      PageTableEntry::kPresent | PageTableEntry::kWritable | PageTableEntry::kAccessed | PageTableEntry::kDirty;
  test.check("map it writable again",
             pv::ops.set_kernel_mapping(mfn_to_va(table), PageTableEntry::make(table, kWritableData)), 0);
  page_allocator.free(mfn_to_pfn(table));
  page_allocator.free(scratch);
}

void flips(SelfTest& test, long boot_mode) {
  static const uint32_t kSequence[] = {abi::kPtwrEmulate,  abi::kPtwrWritable, abi::kPtwrEmulate, abi::kPtwrWritable,
                                       abi::kPtwrWritable, abi::kPtwrAdaptive, abi::kPtwrEmulate, abi::kPtwrAdaptive,
                                       abi::kPtwrWritable, abi::kPtwrEmulate};
  static const char* const kSet[] = {"set itself emulate", "set itself writable", "set itself adaptive"};
  for (uint32_t wanted : kSequence) {
    // Adaptive detaches a table first (it has no history after a switch) and keeps it detached
    // while one entry is rewritten in a loop: the same as writable here.
    const bool writable = wanted != abi::kPtwrEmulate;
    test.check(kSet[wanted], set_mode(0, wanted), long(wanted));
    test.check("  get answers it", get_mode(0), long(wanted));
    test.check("  the frame audit is clean", sys_pvhv_audit(), 0);
    Phase phase = write_phase();
    if (writable) {
      test.check("  plain stores detach the table", phase.detaches > 0, 1);
    } else {
      test.check("  plain stores are emulated", phase.emulations >= kWritesPerPhase, 1);
      test.check("  and nothing is detached", long(phase.detaches), 0);
    }
  }
  switch_with_a_table_detached(test);
  test.check("the boot mode restored", set_mode(0, uint32_t(boot_mode)), boot_mode);
}
}  // namespace

void selftest_ptwr_mode(SelfTest& test) {
  const bool privileged = boot_info.start_info->flags & SIF_PRIVILEGED;
  test.note("privileged", privileged);
  admission(test, privileged);
  if (!privileged) return;
  const long boot_mode = get_mode(0);
  const bool served = boot_mode != -XEN_ENOSYS;
  test.note("served", served);
  if (!served) {
    uint32_t mode = abi::kPtwrWritable;
    test.check("Xen 4.17: set is -ENOSYS too", ptwr_mode_call(0, abi::kPtwrModeSet, mode), -XEN_ENOSYS);
    mode = 1;
    test.check("Xen 4.17: the PVHV note op is -ENOSYS too (the builder goes on)",
               ptwr_mode_call(0, abi::kPtwrReadsUnhookedSet, mode), -XEN_ENOSYS);
    return;
  }
  test.check("the boot mode is one of the three",
             boot_mode == abi::kPtwrEmulate || boot_mode == abi::kPtwrWritable || boot_mode == abi::kPtwrAdaptive, 1);
  test.note("boot mode (1: writable, 2: adaptive)", boot_mode);
  garbage(test, boot_mode);
  pvhv_note_too_late(test);
  const long free_before = control::free_pages();
  flips(test, boot_mode);
  // Entering writable or adaptive takes two snapshot frames, leaving it gives them back: nothing
  // leaks.
  test.check("the hypervisor's free pages are back where they were", control::free_pages(), free_before);
}
}  // namespace kernel
