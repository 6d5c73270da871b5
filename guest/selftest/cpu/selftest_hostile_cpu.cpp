// selftest=hostile-cpu: a guest kernel attacking the hypervisor's CPU paths (issue 8, items 1,
// 2, 6, 7 and 12). Every check holds on Xen 4.17, whose answers are the specification:
//  - a hypercall made with RFLAGS.NT set works (the hypervisor must not run with it);
//  - HYPERVISOR_iret to a frame the CPU refuses (null or DPL-0 code selector, null or code
//    stack selector, non-canonical rip) gives the guest a #GP through its trap table, with
//    the selector as error code, where it would have resumed;
//  - the hypercall number is the whole of rax (0x1_0000_0011 is not xen_version);
//  - multicall: an op with high bits set is -ENOSYS, a nested multicall -EINVAL (no
//    recursion however the list points at itself);
//  - counts are 32 bits (mmu_update, console_io), and batches that run for a long time
//    (set_trap_table, mmu_update, multicall over 16 MiB of one aliased frame) finish with the
//    right result and completed count, however often the hypervisor preempts them;
//  - the hypervisor reaches guest memory in a range whose L1 the writable-pagetable path has
//    unhooked: a console buffer, an iret context, a bounce frame there all work;
//  - one mmu_update batch that writes an L1, unlinks it and writes it again finds it no table
//    the second time (a plain write, taking no reference), however the hypervisor remembers
//    the tables a batch wrote.
#include "pv-kernel-patches/traps.h"
#include "arch/xen.h"
#include "kernel/memory/direct_map.h"
#include "arch/hostile_probes.h"
#include "kernel/memory/page_allocator.h"
#include "kernel/memory/physical_memory.h"
#include "arch/probe.h"
#include "selftest/cpu/cpu_selftests.h"

namespace kernel {
namespace {
constexpr uint64_t kReadOnly = PageTableEntry::kPresent | PageTableEntry::kAccessed;
constexpr uint64_t kWritable = kReadOnly | PageTableEntry::kWritable | PageTableEntry::kDirty;
// A PV iret frame says "back to the kernel" with RPL 0 in cs (Xen forces RPL 3 itself).
constexpr uint64_t kKernelCs = FLAT_KERNEL_CS & ~3ull;

// Kernel-half L4 slots nothing else of this kernel uses.
constexpr unsigned kAliasSlot = 300, kUnhookSlot = 302;
// 8 L2 entries of one L1: 16 MiB of virtual memory that is one frame, 512 times over.
constexpr unsigned kAliasL2Entries = 8;
constexpr uint64_t kAliasBytes = uint64_t{kAliasL2Entries} << 21;

alignas(16) uint8_t probe_stack[4096];

uint64_t slot_va(unsigned l4_index) { return 0xffff000000000000ull | (uint64_t{l4_index} << 39); }

long set_entry(Mfn table, unsigned index, uint64_t value) {
  return pv::ops.raw_mmu_update(table.machine_address() + index * sizeof(uint64_t), value);
}

uint64_t table_entry(Mfn table) { return PageTableEntry::make(table, PageTableEntry::kTableFlags).raw(); }

// L4[slot] -> L3 -> L2 whose first `l2_entries` entries all link one L1, whose entries map
// `frames[i % count]`. Returns the base address, 0 if the hypervisor refused any of it.
uint64_t build_region(unsigned l4_index, const Mfn* frames, unsigned count, uint64_t flags, unsigned l2_entries) {
  Mfn l1 = new_page_table_frame(), l2 = new_page_table_frame(), l3 = new_page_table_frame();
  long rc = 0;
  for (unsigned i = 0; i < 512; ++i) rc |= set_entry(l1, i, PageTableEntry::make(frames[i % count], flags).raw());
  for (unsigned i = 0; i < l2_entries; ++i) rc |= set_entry(l2, i, table_entry(l1));
  rc |= set_entry(l3, 0, table_entry(l2));
  rc |= set_entry(kernel_l4(), l4_index, table_entry(l3));
  return rc ? 0 : slot_va(l4_index);
}

// The last page of the lower canonical half (L4 slot 255, whose tables this kernel makes only
// for user processes), mapped read-only to `frame`: its address, 0 if refused.
constexpr unsigned kLowerHalfLastSlot = 255;
uint64_t map_last_lower_half_page(Mfn frame) {
  Mfn l1 = new_page_table_frame(), l2 = new_page_table_frame(), l3 = new_page_table_frame();
  long rc = set_entry(l1, 511, PageTableEntry::make(frame, kReadOnly).raw());
  rc |= set_entry(l2, 511, table_entry(l1));
  rc |= set_entry(l3, 511, table_entry(l2));
  rc |= set_entry(kernel_l4(), kLowerHalfLastSlot, table_entry(l3));
  return rc ? 0 : (uint64_t{kLowerHalfLastSlot + 1} << 39) - 4096;
}

void remove_region(unsigned l4_index) {
  set_entry(kernel_l4(), l4_index, 0);
  pv::ops.raw_mmuext(MMUEXT_TLB_FLUSH_LOCAL, 0);
}

long xen_version_number() { return xen::xen_version(XENVER_version, nullptr); }

void nested_task_flag(SelfTest& test) {
  test.check("xen_version with RFLAGS.NT set works", hypercall_with_nt(__HYPERVISOR_xen_version, XENVER_version, 0),
             xen_version_number());
}

// Returns through HYPERVISOR_iret to {rip, cs, rflags, rsp, ss}; see probe_iret_on.
long iret_to(uint64_t rip, uint64_t cs, uint64_t ss) {
  uint64_t top = reinterpret_cast<uint64_t>(probe_stack + sizeof(probe_stack));
  const uint64_t context[6] = {rip, cs, 0x2 /* events stay masked */, top - 1024, ss, 0};
  return probe_iret_on(top, context);
}

constexpr long general_protection(uint64_t error_code) { return long((13 << 16) | error_code); }

void refused_return_frames(SelfTest& test) {
  uint64_t landing = reinterpret_cast<uint64_t>(probe_iret_landing);
  test.check("iret to a valid frame lands", iret_to(landing, kKernelCs, FLAT_KERNEL_SS), -1);
  test.check("iret with cs = 0 is the guest's #GP(0)", iret_to(landing, 0, FLAT_KERNEL_SS), general_protection(0));
  test.check("iret with the hypervisor's code selector 0xe008 is #GP(0xe008)", iret_to(landing, 0xe008, FLAT_KERNEL_SS),
             general_protection(0xe008));
  test.check("iret with a data selector as cs is #GP(selector)",
             iret_to(landing, FLAT_RING3_DS32 & ~3ull, FLAT_KERNEL_SS), general_protection(FLAT_RING3_DS32 & ~3));
  test.check("iret with ss = 0 is #GP(0)", iret_to(landing, kKernelCs, 0), general_protection(0));
  test.check("iret with a code selector as ss is #GP(selector)", iret_to(landing, kKernelCs, FLAT_RING3_CS64),
             general_protection(FLAT_RING3_CS64 & ~3));
  // TI set: a local-descriptor-table selector, and there is no LDT (Xen loads a null one).
  test.check("iret with an LDT selector as cs is #GP(selector)", iret_to(landing, kKernelCs | 4, FLAT_KERNEL_SS),
             general_protection(kKernelCs | 4));
  test.check("iret with an LDT selector as ss is #GP(selector)", iret_to(landing, kKernelCs, 0x089f),
             general_protection(0x089c));
  test.check("iret to a non-canonical rip is #GP(0)", iret_to(0x0000800000000000ull, kKernelCs, FLAT_KERNEL_SS),
             general_protection(0));
}

void hypercall_numbers(SelfTest& test) {
  test.check("rax = __HYPERVISOR_xen_version works", hypercall_raw(__HYPERVISOR_xen_version, XENVER_version, 0, 0),
             xen_version_number());
  test.check("rax = 0x1_0000_0011 is -ENOSYS, not xen_version",
             hypercall_raw(0x100000000ull | __HYPERVISOR_xen_version, XENVER_version, 0, 0), -XEN_ENOSYS);
  test.check("rax = 2^63 + 17 is -ENOSYS", hypercall_raw((1ull << 63) | __HYPERVISOR_xen_version, XENVER_version, 0, 0),
             -XEN_ENOSYS);
}

alignas(64) multicall_entry_t calls[4];

void multicall_entries(SelfTest& test) {
  uint64_t list = reinterpret_cast<uint64_t>(calls);
  calls[0] = multicall_entry_t{0x100000000ull | __HYPERVISOR_multicall, 0, {list, 1, 0, 0, 0, 0}};
  calls[1] = multicall_entry_t{__HYPERVISOR_multicall, 0, {list, 1, 0, 0, 0, 0}};  // itself: no recursion
  calls[2] = multicall_entry_t{0x100000000ull | __HYPERVISOR_iret, 0, {0, 0, 0, 0, 0, 0}};
  calls[3] = multicall_entry_t{__HYPERVISOR_xen_version, 0, {XENVER_version, 0, 0, 0, 0, 0}};
  test.check("multicall of four entries", arch::hypercall(__HYPERVISOR_multicall, list, 4), 0);
  test.check("  op 0x1_0000_000d is -ENOSYS", long(calls[0].result), -XEN_ENOSYS);
  test.check("  a nested multicall (of its own list) is -EINVAL", long(calls[1].result), -XEN_EINVAL);
  test.check("  op 0x1_0000_0017 is -ENOSYS, not iret", long(calls[2].result), -XEN_ENOSYS);
  test.check("  xen_version after them works", long(calls[3].result), xen_version_number());
}

alignas(16) mmu_update_t two_updates[2];

// MMU_MACHPHYS_UPDATE of one of our frames to the value it has: harmless, accepted by Xen.
mmu_update_t harmless_update(Mfn frame) {
  return mmu_update_t{frame.machine_address() | MMU_MACHPHYS_UPDATE, mfn_to_pfn(frame).value};
}

void thirty_two_bit_counts(SelfTest& test) {
  Mfn own = va_to_mfn(reinterpret_cast<uint64_t>(probe_stack));
  two_updates[0] = two_updates[1] = harmless_update(own);
  unsigned done = 0;
  test.check(
      "mmu_update with count 0x1_0000_0002 does 2 (the count is 32 bits)",
      arch::hypercall(__HYPERVISOR_mmu_update, arch::arg(two_updates), 0x100000002ull, arch::arg(&done), DOMID_SELF),
      0);
  test.check("  and says so", done, 2);
  static const char text[] = "hostile: a 32-bit console count\n";
  test.check(
      "console_io with count 2^32 + n writes n bytes",
      arch::hypercall(__HYPERVISOR_console_io, CONSOLEIO_write, (1ull << 32) + sizeof(text) - 1, arch::arg(text)), 0);
}

long set_periodic(uint64_t period_ns) {
  vcpu_set_periodic_timer_t timer{period_ns};
  return xen::vcpu_op(VCPUOP_set_periodic_timer, 0, &timer);
}

// Timer values that would wrap a deadline (found by the fuzzing domain: a period near 2^64
// kept the hypervisor catching up in its timer interrupt). Xen's bounds: 1 ms to 2^62 - 1 ns.
void timer_bounds(SelfTest& test) {
  test.check("a periodic timer of 2^64 - 6 ns is -EINVAL", set_periodic(~0ull - 5), -XEN_EINVAL);
  test.check("a periodic timer of 2^62 ns is -EINVAL", set_periodic(1ull << 62), -XEN_EINVAL);
  test.check("a periodic timer below 1 ms is -EINVAL", set_periodic(999999), -XEN_EINVAL);
  test.check("a periodic timer of 2^62 - 1 ns is accepted", set_periodic((1ull << 62) - 1), 0);
  test.check("  and stopped", xen::vcpu_op(VCPUOP_stop_periodic_timer, 0, nullptr), 0);
  test.check("a single-shot timer at the end of time is accepted", xen::set_timer(~0ull), 0);
  test.check("  and cancelled", xen::set_timer(0), 0);
  test.check("a yield afterwards returns", xen::sched_op(SCHEDOP_yield, nullptr), 0);
}

// One frame seen 4096 times over: lists far longer than memory would allow, each call running
// long enough for several time slices to end inside it.
void long_batches(SelfTest& test) {
  Pfn pfn = allocate_zeroed_frame();
  Mfn frame = pfn_to_mfn(pfn);
  auto* trap = pfn_pointer<trap_info_t>(pfn);
  for (unsigned i = 0; i < 4096 / sizeof(trap_info_t); ++i)
    trap[i] = trap_info_t{200, 0, FLAT_KERNEL_CS, reinterpret_cast<unsigned long>(probe_int3_on)};
  uint64_t traps = build_region(kAliasSlot, &frame, 1, kReadOnly, kAliasL2Entries);
  test.check("16 MiB of one read-only frame of trap entries is mapped", static_cast<long>(traps != 0), 1);
  if (traps) {
    test.check("set_trap_table over it runs to the end of the mapping: -EFAULT",
               arch::hypercall(__HYPERVISOR_set_trap_table, traps), -XEN_EFAULT);
    remove_region(kAliasSlot);
  }

  auto* update = pfn_pointer<mmu_update_t>(pfn);
  for (unsigned i = 0; i < 4096 / sizeof(mmu_update_t); ++i) update[i] = harmless_update(frame);
  uint64_t updates = build_region(kAliasSlot, &frame, 1, kReadOnly, kAliasL2Entries);
  if (updates) {
    unsigned done = 0;
    test.check("mmu_update of 2^31 - 1 requests over 16 MiB: -EFAULT past the end",
               arch::hypercall(__HYPERVISOR_mmu_update, updates, 0x7fffffff, arch::arg(&done), DOMID_SELF),
               -XEN_EFAULT);
    test.check("  having done every request of the mapping", done, long(kAliasBytes / sizeof(mmu_update_t)));
    remove_region(kAliasSlot);
  }

  // A list whose range runs out of the lower canonical half: the requests in its last page are
  // done, the first past 2^47 is -EFAULT (the hypervisor checks a list it cannot check whole
  // request by request).
  uint64_t last_page = map_last_lower_half_page(frame);
  if (last_page) {
    unsigned done = 0;
    test.check("mmu_update of a list running out of the lower half: -EFAULT at 2^47",
               arch::hypercall(__HYPERVISOR_mmu_update, last_page, 0x7fffffff, arch::arg(&done), DOMID_SELF),
               -XEN_EFAULT);
    test.check("  having done the requests of the last page", done, long(4096 / sizeof(mmu_update_t)));
    set_entry(kernel_l4(), kLowerHalfLastSlot, 0);
    pv::ops.raw_mmuext(MMUEXT_TLB_FLUSH_LOCAL, 0);
  }

  auto* call = pfn_pointer<multicall_entry_t>(pfn);
  for (unsigned i = 0; i < 4096 / sizeof(multicall_entry_t); ++i)
    call[i] = multicall_entry_t{__HYPERVISOR_xen_version, 0, {XENVER_version, 0, 0, 0, 0, 0}};
  uint64_t calls = build_region(kAliasSlot, &frame, 1, kWritable, kAliasL2Entries);
  if (calls) {
    test.check("multicall of 2^32 - 1 entries over 16 MiB (writable): -EFAULT past the end",
               arch::hypercall(__HYPERVISOR_multicall, calls, 0xffffffffull), -XEN_EFAULT);
    test.check("  every entry has its result", long(call[5].result), xen_version_number());
    remove_region(kAliasSlot);
  }
}

// The L1 that maps `base`, 0 if there is none.
Mfn l1_of(uint64_t base) {
  pv::PageTableSlot l2;
  return base && walk(kernel_l4(), base, Level::l2, l2) ? read_entry(l2).mfn() : Mfn{0};
}

alignas(16) mmu_update_t unlinking_batch[4];

// One batch: an entry of L1 B, one of L1 A, the L2 entry that is A's only link (unlinked: A is
// no table any more), A once more. The last request is a plain write to an ordinary frame
// (Xen: a Writable type for its duration, no reference for what it writes); the frame audit at
// the end of the test finds any reference it took. (Ours remembers the last two L1s a batch
// wrote: the L2 update must make it forget A.)
void batch_unlinking_a_table(SelfTest& test) {
  Pfn page = allocate_zeroed_frame();
  Mfn frame = pfn_to_mfn(page);
  const uint64_t a = build_region(kAliasSlot, &frame, 1, kReadOnly, 1);
  const uint64_t b = build_region(kUnhookSlot, &frame, 1, kReadOnly, 1);
  const Mfn l1_a = l1_of(a), l1_b = l1_of(b);
  pv::PageTableSlot l2_a;
  const bool mapped = a && b && l1_a.value && l1_b.value && walk(kernel_l4(), a, Level::l2, l2_a);
  test.check("two regions of one L1 each are mapped", static_cast<long>(mapped), 1);
  if (!mapped) return;
  const uint64_t entry = PageTableEntry::make(frame, kReadOnly).raw();
  auto slot = [](Mfn table, unsigned index) { return table.machine_address() + index * sizeof(uint64_t); };
  unlinking_batch[0] = mmu_update_t{slot(l1_b, 1) | MMU_NORMAL_PT_UPDATE, 0};
  unlinking_batch[1] = mmu_update_t{slot(l1_a, 1) | MMU_NORMAL_PT_UPDATE, 0};
  unlinking_batch[2] = mmu_update_t{l2_a.machine_address | MMU_NORMAL_PT_UPDATE, 0};
  unlinking_batch[3] = mmu_update_t{slot(l1_a, 3) | MMU_NORMAL_PT_UPDATE, entry};
  unsigned done = 0;
  test.check("a batch that writes an L1, unlinks it and writes it again: all done",
             arch::hypercall(__HYPERVISOR_mmu_update, arch::arg(unlinking_batch), 4, arch::arg(&done), DOMID_SELF), 0);
  test.check("  four requests done", done, 4);
  pv::ops.raw_mmuext(MMUEXT_TLB_FLUSH_LOCAL, 0);
  // A table's entry would have been adjusted (a kernel mapping gains the user bit).
  test.check("  the last one stored as written (a plain write)",
             static_cast<long>(read_entry(table_slot(l1_a, 3, Level::l1)).raw() == entry), 1);
  remove_region(kAliasSlot);
  remove_region(kUnhookSlot);
}

// A range whose L1 is detached, and unhooked under ptwr=writable, by a plain store to it.
struct UnhookableRange {
  uint64_t base = 0;
  Mfn l1{0};
  void detach() const { probe_store64(reinterpret_cast<volatile uint64_t*>(mfn_to_va(l1)) + 7, 0); }
};

UnhookableRange unhookable_range() {
  UnhookableRange range;
  Pfn page = allocate_zeroed_frame();
  Mfn frame = pfn_to_mfn(page);
  range.base = build_region(kUnhookSlot, &frame, 1, kWritable, 1);
  pv::PageTableSlot l2;
  if (range.base && walk(kernel_l4(), range.base, Level::l2, l2)) range.l1 = read_entry(l2).mfn();
  // Only entry 0 maps the page: the others would alias it.
  for (unsigned i = 1; i < 512; ++i) set_entry(range.l1, i, 0);
  return range;
}

void unhooked_guest_memory(SelfTest& test) {
  UnhookableRange range = unhookable_range();
  test.check("a range of its own L1 is mapped", static_cast<long>(range.base != 0 && range.l1.value != 0), 1);
  if (!range.base) return;
  static const char text[] = "hostile: printed from a range whose L1 was just written directly\n";
  __builtin_memcpy(reinterpret_cast<char*>(range.base), text, sizeof(text) - 1);
  uint64_t top = range.base + 4096;

  range.detach();
  test.check("console_io from a buffer in the range just written",
             xen::console_write(reinterpret_cast<const char*>(range.base), sizeof(text) - 1), 0);
  range.detach();
  const uint64_t context[6] = {
      reinterpret_cast<uint64_t>(probe_iret_landing), kKernelCs, 0x2, top - 512, FLAT_KERNEL_SS, 0};
  test.check("HYPERVISOR_iret with its context in the range", probe_iret_on(top, context), -1);
  range.detach();
  test.check("an exception whose bounce frame goes in the range", probe_int3_on(top), 0);
  remove_region(kUnhookSlot);
}
}  // namespace

// Each group is also a self-test of its own (selftest=hostile-nt, hostile-iret, ...), so one
// attack can be replayed alone.
const HostileGroup hostile_cpu_groups[] = {{"hostile-nt", nested_task_flag},
                                           {"hostile-iret", refused_return_frames},
                                           {"hostile-numbers", hypercall_numbers},
                                           {"hostile-multicall", multicall_entries},
                                           {"hostile-counts", thirty_two_bit_counts},
                                           {"hostile-timers", timer_bounds},
                                           {"hostile-batches", long_batches},
                                           {"hostile-unhooked", unhooked_guest_memory},
                                           {"hostile-batch-unlink", batch_unlinking_a_table}};
const unsigned hostile_cpu_group_count = sizeof(hostile_cpu_groups) / sizeof(hostile_cpu_groups[0]);

void selftest_hostile_cpu(SelfTest& test) {
  for (const HostileGroup& group : hostile_cpu_groups) group.run(test);
}

// selftest=hostile-iret-crash: with no trap table, a refused iret frame cannot be delivered
// as a #GP: the domain is crashed with a message, the hypervisor carries on.
void selftest_hostile_iret_crash(SelfTest& test) {
  pv::traps_remove_all();
  test.note("returning through iret with cs = 0 and no trap table", 0);
  long result = iret_to(reinterpret_cast<uint64_t>(probe_iret_landing), 0, FLAT_KERNEL_SS);
  test.check("still running after the refused iret (never: the domain should be crashed)", result, -2);
}

// selftest=hostile-privop-crash: with no trap table, a privileged instruction that no
// hypervisor performs for a PV kernel (hlt: Xen's emulator refuses it as ours does) raises a
// #GP the guest cannot take: the domain is crashed, the hypervisor reports its RIP and bytes.
void selftest_hostile_privop_crash(SelfTest& test) {
  pv::traps_remove_all();
  test.note("executing hlt in kernel mode with no trap table", 0);
  asm volatile("hlt" ::: "memory");
  test.check("still running after hlt (never: the domain should be crashed)", 0, -2);
}
}  // namespace kernel
