// selftest=emulation-caches: the hypervisor's caches on the emulated page-table write path
// never serve a stale answer (xen/emulate/translation_cache.h, decode_cache.h).
//
// Translation: a window W of a free kernel L2 slot maps an L1 table T1 read-only through a
// table M1. Two plain stores to W are emulated (the second may be served by a cached walk),
// then the walk is changed without touching W and without a flush:
//   1. the L2 slot is relinked to M2 (which maps T2 there) by mmu_update on the L2: the next
//      store through W must land in T2;
//   2. M2's entry is pointed at T3 by mmu_update on M2's machine address (an alias of the
//      mapping W uses): the next store must land in T3.
// A store into the wrong table would show as an entry in T1 (or T2) that nobody wrote there.
//
// Decode: a store instruction `mov %rsi,(%rdi)` in a frame with no writable mapping (the
// hypervisor may trust its decode without reading the bytes again) writes an entry through
// the window twice; then the frame is mapped writable at a second address and the ModRM byte
// rewritten there to make it `mov %rdx,(%rdi)`: the next write must store rdx.
// Xen 4.17 walks the guest's tables at every fault, so it answers the same; under ptwr=writable
// the stores detach the tables instead of being emulated, and the answer is the same again.
//
// selftest=emulation-caches-smp: the same with every store made by vCPU 1 and every change by
// vCPU 0, on two CPUs (dom0_vcpus_pin, sched_smp=1): the caches a store fills are one CPU's,
// the code and tables change from the other (issue 30, item 6: each CPU keeps caches of its own,
// which another vCPU's change must invalidate before their next use).
#include "arch/xen.h"
#include "kernel/boot/boot_info.h"
#include "kernel/memory/direct_map.h"
#include "lib/linux_abi.h"
#include "kernel/memory/page_allocator.h"
#include "kernel/memory/physical_memory.h"
#include "arch/probe.h"
#include "kernel/measurement/pvhv.h"
#include "kernel/smp/vcpus.h"
#include "selftest/memory/memory_selftests.h"

namespace kernel {
namespace {
constexpr uint64_t kReadOnly = PageTableEntry::kPresent | PageTableEntry::kAccessed;
constexpr uint64_t kWritable = kReadOnly | PageTableEntry::kWritable | PageTableEntry::kDirty;
constexpr uint64_t kRegion = 2ull << 20;  // what one L1 maps

uint64_t entry(Mfn mfn, uint64_t flags) { return PageTableEntry::make(mfn, flags).raw(); }
volatile uint64_t* entries_of(Mfn table) { return reinterpret_cast<volatile uint64_t*>(mfn_to_va(table)); }
long set_entry(uint64_t machine_address, uint64_t value) { return pv::ops.raw_mmu_update(machine_address, value); }
long set_entry(Mfn table, unsigned index, uint64_t value) {
  return set_entry(table.machine_address() + index * 8, value);
}
// Any MMU hypercall reattaches what the writable-pagetable path detached (and flushes nothing).
long settle() { return arch::hypercall(__HYPERVISOR_mmuext_op, 0, 0, 0, DOMID_SELF); }

Mfn kernel_l2() {
  pv::PageTableSlot slot;
  walk(kernel_l4(), kVirtBase, Level::l2, slot);
  return Mfn{slot.machine_address >> 12};
}
unsigned free_slot(Mfn table, unsigned first, unsigned last) {
  for (unsigned index = last; index >= first && index > 0; --index)
    if (entries_of(table)[index] == 0) return index;
  return 0;
}

Mfn pinned_l1(SelfTest& test) {
  Mfn table = new_page_table_frame();
  test.check("  pin an L1", pv::ops.raw_mmuext(MMUEXT_PIN_L1_TABLE, table.value), 0);
  return table;
}
void unpin_and_release(SelfTest& test, Mfn table) {
  test.check("  unpin it", pv::ops.raw_mmuext(MMUEXT_UNPIN_TABLE, table.value), 0);
  Pfn pfn = mfn_to_pfn(table);
  if (pv::ops.set_kernel_mapping(pfn_to_va(pfn), PageTableEntry::make(table, kWritable)) == 0) page_allocator.free(pfn);
}

// Which vCPU makes the stores: this one (0), or vCPU 1 (selftest=emulation-caches-smp).
unsigned storing_vcpu = 0;
constexpr uint64_t kTimeout = 5'000'000'000ull;

using StoreFunction = void (*)(volatile uint64_t* where, uint64_t rsi, uint64_t rdx);
struct Store {
  StoreFunction function;  // null: a probed plain store of rsi
  volatile uint64_t* where;
  uint64_t rsi, rdx;
};
long run_store(uint64_t argument) {
  const Store& store = *reinterpret_cast<const Store*>(argument);
  if (store.function == nullptr) return probe_store64(store.where, store.rsi);
  store.function(store.where, store.rsi, store.rdx);
  return 0;
}
// The store on the storing vCPU; -1000 if it did not answer.
long store_there(const Store& store) {
  const uint64_t argument = reinterpret_cast<uint64_t>(&store);
  if (storing_vcpu == 0) return run_store(argument);
  long result = -1000;
  return smp::run_on(storing_vcpu, run_store, argument, result, kTimeout) ? result : -1000;
}

uint64_t emulations() {
  pvhv_counters counters{};
  return read_pvhv_counters(counters) == 0 ? counters.emulations : 0;
}

// A plain store of `value` at `window[index]`, then checks where it landed.
void store_and_check(SelfTest& test, const char* what, volatile uint64_t* window, unsigned index, uint64_t value,
                     Mfn expected, Mfn stale) {
  test.check(what, store_there(Store{nullptr, &window[index], value, 0}), 0);
  test.check("  settle", settle(), 0);
  // The hypervisor may adjust flags (a 64-bit PV kernel's entries gain U): compare the frame.
  const PageTableEntry landed(entries_of(expected)[index]);
  test.check("  it landed in the table the walk finds now",
             static_cast<long>(landed.present() && landed.mfn().value == PageTableEntry(value).mfn().value), 1);
  if (stale.value != expected.value)
    test.check("  not in the table the walk found before", static_cast<long>(entries_of(stale)[index]), 0);
}

void translation_never_stale(SelfTest& test) {
  test.note("translation cache: the walk changed between two emulated writes", 1);
  Mfn t1 = pinned_l1(test), t2 = pinned_l1(test), t3 = pinned_l1(test);
  Mfn m1 = pinned_l1(test), m2 = pinned_l1(test);
  Pfn data_pfn = allocate_zeroed_frame();
  const uint64_t value = entry(pfn_to_mfn(data_pfn), kReadOnly);
  test.check("  M1 maps T1 read-only", set_entry(m1, 0, entry(t1, kReadOnly)), 0);
  test.check("  M2 maps T2 read-only", set_entry(m2, 0, entry(t2, kReadOnly)), 0);
  const Mfn l2 = kernel_l2();
  const unsigned slot = free_slot(l2, 256, 500);
  test.check("  a free slot in the kernel's L2", static_cast<long>(slot != 0), 1);
  if (slot == 0) return;
  test.check("  link M1 there", set_entry(l2, slot, entry(m1, PageTableEntry::kTableFlags)), 0);
  auto* window = reinterpret_cast<volatile uint64_t*>(kVirtBase + slot * kRegion);

  const uint64_t emulated_before = emulations();
  store_and_check(test, "  a store through the window", window, 3, value, t1, t1);
  store_and_check(test, "  a second one (the walk may now be cached)", window, 4, value, t1, t1);
  test.check("case 1: the L2 slot relinked to M2, through the L2, no flush",
             set_entry(l2, slot, entry(m2, PageTableEntry::kTableFlags)), 0);
  store_and_check(test, "  a store through the window", window, 5, value, t2, t1);
  store_and_check(test, "  a second one", window, 6, value, t2, t1);
  test.check("case 2: M2's entry pointed at T3, through M2's machine address, no flush",
             set_entry(m2, 0, entry(t3, kReadOnly)), 0);
  store_and_check(test, "  a store through the window", window, 7, value, t3, t2);
  store_and_check(test, "  a second one", window, 8, value, t3, t2);
  test.note("  page-table writes emulated meanwhile (ours)", static_cast<long>(emulations() - emulated_before));

  test.check("  unlink the window", set_entry(l2, slot, 0), 0);
  test.check("  flush the TLB", pv::ops.raw_mmuext(MMUEXT_TLB_FLUSH_LOCAL, 0), 0);
  const Mfn tables[] = {m1, m2, t1, t2, t3};
  for (Mfn table : tables) unpin_and_release(test, table);
  page_allocator.free(data_pfn);
}

// mov %rsi,(%rdi); ret — and the same with %rdx, one byte apart (the ModRM).
constexpr uint8_t kStoreRsi[] = {0x48, 0x89, 0x37, 0xc3};
constexpr uint8_t kModrmRdx = 0x17;

void decode_never_stale(SelfTest& test) {
  test.note("decode cache: the store instruction rewritten through a second mapping between two emulated writes", 1);
  Mfn table = pinned_l1(test), window_l1 = pinned_l1(test);
  Pfn code_pfn = allocate_zeroed_frame(), rsi_pfn = allocate_zeroed_frame(), rdx_pfn = allocate_zeroed_frame();
  const Mfn code = pfn_to_mfn(code_pfn);
  auto* code_bytes = reinterpret_cast<volatile uint8_t*>(pfn_to_va(code_pfn));
  for (unsigned i = 0; i < sizeof kStoreRsi; ++i) code_bytes[i] = kStoreRsi[i];
  // Without a writable mapping anywhere, the hypervisor may trust what it decoded from it.
  test.check("  the code frame's direct map made read-only",
             pv::ops.set_kernel_mapping(pfn_to_va(code_pfn), PageTableEntry::make(code, kReadOnly)), 0);
  test.check("  window L1: the table read-only", set_entry(window_l1, 0, entry(table, kReadOnly)), 0);
  test.check("  window L1: the code read-only", set_entry(window_l1, 1, entry(code, kReadOnly)), 0);
  const Mfn l2 = kernel_l2();
  const unsigned slot = free_slot(l2, 256, 500);
  test.check("  a free slot in the kernel's L2", static_cast<long>(slot != 0), 1);
  if (slot == 0) return;
  test.check("  link the window L1 there", set_entry(l2, slot, entry(window_l1, PageTableEntry::kTableFlags)), 0);
  const uint64_t window = kVirtBase + slot * kRegion;
  auto* entries = reinterpret_cast<volatile uint64_t*>(window);
  auto instruction = reinterpret_cast<StoreFunction>(window + 4096);
  auto store = [&](volatile uint64_t* where, uint64_t rsi, uint64_t rdx) {
    store_there(Store{instruction, where, rsi, rdx});
  };
  const uint64_t rsi = entry(pfn_to_mfn(rsi_pfn), kReadOnly), rdx = entry(pfn_to_mfn(rdx_pfn), kReadOnly);
  auto landed = [&](unsigned index, uint64_t value) {
    settle();
    const PageTableEntry got(entries_of(table)[index]);
    return static_cast<long>(got.present() && got.mfn().value == PageTableEntry(value).mfn().value);
  };

  store(&entries[3], rsi, rdx);
  test.check("  the store stored rsi", landed(3, rsi), 1);
  store(&entries[4], rsi, rdx);
  test.check("  again (its decode may now be trusted without the bytes)", landed(4, rsi), 1);
  test.check("  a writable alias of the code frame (mmu_update, no flush)",
             set_entry(window_l1, 2, entry(code, kWritable)), 0);
  reinterpret_cast<volatile uint8_t*>(window + 2 * 4096)[2] = kModrmRdx;
  store(&entries[5], rsi, rdx);
  test.check("  the rewritten store stored rdx", landed(5, rdx), 1);
  test.check("  the alias removed", set_entry(window_l1, 2, 0), 0);
  store(&entries[6], rsi, rdx);
  test.check("  and still rdx", landed(6, rdx), 1);

  test.check("  unlink the window", set_entry(l2, slot, 0), 0);
  test.check("  flush the TLB", pv::ops.raw_mmuext(MMUEXT_TLB_FLUSH_LOCAL, 0), 0);
  unpin_and_release(test, window_l1);
  unpin_and_release(test, table);
  if (pv::ops.set_kernel_mapping(pfn_to_va(code_pfn), PageTableEntry::make(code, kWritable)) == 0)
    page_allocator.free(code_pfn);
  page_allocator.free(rsi_pfn);
  page_allocator.free(rdx_pfn);
}

void check_audit(SelfTest& test) {
  long mismatches = sys_pvhv_audit();
  if (mismatches == -linux_abi::kENOSYS)
    test.note("frame audit not available here (not our hypervisor, or unprivileged)", mismatches);
  else
    test.check("frame audit: every count agrees with the page tables", mismatches, 0);
}
}  // namespace

void selftest_emulation_caches(SelfTest& test) {
  translation_never_stale(test);
  decode_never_stale(test);
  check_audit(test);
}

void selftest_emulation_caches_smp(SelfTest& test) {
  test.check("at least two vCPUs (dom0_max_vcpus=)", smp::vcpu_count() >= 2, true);
  if (smp::vcpu_count() < 2) return;
  test.check("vCPU 0's own IPI port bound", smp::init(), 0);
  test.check("vCPU 1 brought up", smp::start(1).ok(), true);
  long id = -1;
  test.check("  it runs work",
             smp::run_on(
                 1, [](uint64_t) { return long(current_vcpu_id()); }, 0, id, kTimeout),
             true);
  test.check("  as vCPU 1", id, 1);
  storing_vcpu = 1;
  translation_never_stale(test);
  decode_never_stale(test);
  storing_vcpu = 0;
  check_audit(test);
}
}  // namespace kernel
