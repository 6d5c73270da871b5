// The fuzzer's pool (fuzz/generator/fuzz_model.h): scratch page tables and data frames of its own, built
// into an initial tree under the kernel L4's fuzz slots and two pinned clones of the kernel
// L4; the window of fixed pages (text, an edge page followed by a hole, a read-only page);
// and the protected things it aims at without destroying them. Teardown undoes all of it.
#include "arch/xen.h"
#include "kernel/console/console.h"
#include "kernel/memory/direct_map.h"
#include "fuzz/fuzz_internal.h"
#include "kernel/memory/page_allocator.h"
#include "kernel/console/panic.h"
#include "kernel/memory/physical_memory.h"
#include "pv-kernel-patches/shared_info.h"
#include "fuzz/generator/fuzz_entries.h"
#include "pv-kernel-patches/pv_ops.h"

extern "C" char hypercall_page[];
extern "C" char _image_start[], _text_end[];

namespace kernel::fuzz {
namespace {

using namespace lib::fuzz;

constexpr uint64_t kReadOnly = PageTableEntry::kPresent | PageTableEntry::kAccessed;
constexpr uint64_t kWritable = kReadOnly | PageTableEntry::kWritable | PageTableEntry::kDirty;
// The window: fixed pages the operations use, in the kernel's last 8 MiB (no other user).
constexpr uint64_t kTextPage = kWindowVa, kEdgePage = kWindowVa + 0x1000, kHolePage = kWindowVa + 0x2000;
constexpr uint64_t kReadOnlyPage = kWindowVa + 0x3000;
// Memory of the campaign's own, mapped in the window rather than carried in every kernel's
// .bss (a bigger image moves the kernel's own layout): the operation buffer, the landing
// stack of the iret probes, and room for the checks and the log.
constexpr uint64_t kBufferPages = kWindowVa + 0x8000, kBufferSize = 4 * 4096;
constexpr uint64_t kIretStackPages = kWindowVa + 0x10000, kIretStackSize = 4 * 4096;
constexpr uint64_t kWorkPages = kWindowVa + 0x18000, kWorkSize = 8 * 4096;
// A 2 MiB range of the kernel's space with no L1 table at all.
constexpr uint64_t kUnmappedVa = kWindowVa - (2ull << 20);

long mmu_update_raw(uint64_t ptr, uint64_t value) { return pv::ops.raw_mmu_update(ptr, value); }

uint64_t read_slot(Mfn table, unsigned index) { return *table_slot(table, index, Level::l1).kernel_va; }

void add_protected_slot(Campaign& c, Mfn table, unsigned index, uint8_t level, bool maps_table, uint64_t va) {
  Pool& pool = c.pool;
  if (pool.protected_slot_count >= kMaxProtectedSlots) return;
  c.protected_slot_va[pool.protected_slot_count] = table_slot(table, index, Level::l1).kernel_va;
  pool.protected_slots[pool.protected_slot_count++] =
      ProtectedSlot{table.machine_address() + index * 8ull, read_slot(table, index), level, maps_table, va};
}

// read_only: the kernel maps the frame read-only only (its text, write_protect_kernel_text; the
// window's read-only page), so nothing would refuse it a table type (OtherFrame::read_only).
void add_protected_frame(Pool& pool, uint64_t mfn, uint8_t level, bool read_only = false) {
  for (unsigned i = 0; i < pool.protected_frame_count; ++i)
    if (pool.protected_frames[i].mfn == mfn) return;
  if (pool.protected_frame_count < kMaxProtectedFrames)
    pool.protected_frames[pool.protected_frame_count++] = OtherFrame{mfn, level, read_only};
}

// The L1 slot of a kernel address, as a protected slot (its frame protected too).
void protect_kernel_page(Campaign& c, uint64_t va, bool maps_table) {
  Pool& pool = c.pool;
  pv::PageTableSlot slot;
  if (!walk(kernel_l4(), va, Level::l1, slot)) return;
  Mfn l1{slot.machine_address >> 12};
  uint64_t entry = *slot.kernel_va;
  if (pool.protected_slot_count < kMaxProtectedSlots) {
    c.protected_slot_va[pool.protected_slot_count] = slot.kernel_va;
    pool.protected_slots[pool.protected_slot_count++] =
        ProtectedSlot{slot.machine_address, entry, 1, maps_table, va & ~0xfffull};
  }
  add_protected_frame(pool, l1.value, 1);
  if (entry & 1)
    add_protected_frame(pool, PageTableEntry(entry).mfn().value, maps_table ? 0xff : 0,
                        !maps_table && !(entry & PageTableEntry::kWritable));
}

void fill_text(uint8_t* page) {
  static const char kLine[] = "fuzz console text: the quick brown fox jumps over the lazy dog 0123456789\n";
  for (unsigned i = 0; i < 4096; ++i) page[i] = uint8_t(kLine[i % (sizeof(kLine) - 1)]);
}

uint64_t current_stack_page() {
  uint64_t rsp;
  asm volatile("mov %%rsp, %0" : "=r"(rsp));
  return rsp & ~0xfffull;
}

void build_window(Campaign& c) {
  Pool& pool = c.pool;
  for (uint64_t page = 0; page < kBufferSize + kIretStackSize + kWorkSize; page += 4096) {
    uint64_t va = page < kBufferSize                    ? kBufferPages + page
                  : page < kBufferSize + kIretStackSize ? kIretStackPages + (page - kBufferSize)
                                                        : kWorkPages + (page - kBufferSize - kIretStackSize);
    add_protected_frame(pool, map_window_page(va, kWritable), 0);
  }
  c.iret_stack_top = kIretStackPages + kIretStackSize;
  c.work = reinterpret_cast<uint8_t*>(kWorkPages);
  c.work_size = kWorkSize;
  uint64_t text_mfn = map_window_page(kTextPage, kWritable);
  fill_text(reinterpret_cast<uint8_t*>(kTextPage));
  uint64_t edge_mfn = map_window_page(kEdgePage, kWritable);
  uint64_t read_only_mfn = map_window_page(kReadOnlyPage, kReadOnly);
  pool.text_va = kTextPage;
  pool.text_size = 4096;
  pool.edge = reinterpret_cast<uint8_t*>(kEdgePage);
  pool.edge_va = kEdgePage;
  pool.unmapped_va = kUnmappedVa + 0x1000 * 37;
  pool.read_only_va = kReadOnlyPage;
  pool.buffer = reinterpret_cast<uint8_t*>(kBufferPages);
  pool.buffer_va = kBufferPages;
  pool.buffer_size = kBufferSize;
  pool.kernel_image_va = reinterpret_cast<uint64_t>(_image_start);
  pool.kernel_image_size = (boot_info.first_free_pfn.value << 12) - 0x1000;
  pool.stack_va = current_stack_page();
  add_protected_frame(pool, text_mfn, 0);
  add_protected_frame(pool, edge_mfn, 0);
  add_protected_frame(pool, read_only_mfn, 0, true);
  // The hole after the edge page must stay unmapped: it is what ends the reads there.
  if (leaf_entry(c, kHolePage) & 1) panic("fuzz: the window's hole is mapped");
}

void collect_protected(Campaign& c) {
  Pool& pool = c.pool;
  Mfn l4 = kernel_l4();
  Mfn l3 = PageTableEntry(read_slot(l4, kKernelL4Slot)).mfn();
  Mfn l2 = PageTableEntry(read_slot(l3, lib::table_index(kVirtBase, Level::l3))).mfn();
  pool.kernel_l4_mfn = l4.value;
  add_protected_frame(pool, l4.value, 4);
  add_protected_frame(pool, l3.value, 3);
  add_protected_frame(pool, l2.value, 2);
  add_protected_slot(c, l4, kKernelL4Slot, 4, false, 0);
  add_protected_slot(c, l4, kFirstHypervisorSlot, 4, false, 0);
  add_protected_slot(c, l4, kFirstHypervisorSlot + 5, 4, false, 0);
  add_protected_slot(c, l4, 0, 4, false, 0);
  add_protected_slot(c, l4, 400, 4, false, 0);
  add_protected_slot(c, l3, lib::table_index(kVirtBase, Level::l3), 3, false, 0);
  add_protected_slot(c, l3, 0, 3, false, 0);
  add_protected_slot(c, l2, 0, 2, false, 0);
  add_protected_slot(c, l2, lib::table_index(kWindowVa, Level::l2), 2, false, 0);
  add_protected_slot(c, l2, lib::table_index(kUnmappedVa, Level::l2), 2, false, 0);
  protect_kernel_page(c, kVirtBase + 0x1000, false);  // kernel text
  protect_kernel_page(c, reinterpret_cast<uint64_t>(hypercall_page), false);
  protect_kernel_page(c, kBufferPages, false);
  protect_kernel_page(c, current_stack_page(), false);
  protect_kernel_page(c, reinterpret_cast<uint64_t>(boot_info.start_info), false);
  protect_kernel_page(c, reinterpret_cast<uint64_t>(shared_info()), false);
  protect_kernel_page(c, reinterpret_cast<uint64_t>(boot_info.p2m), false);
  if (console_ring()) protect_kernel_page(c, reinterpret_cast<uint64_t>(console_ring()), false);  // a domU's console
  protect_kernel_page(c, c.kernel_l4_va, true);                                                   // the L4's mapping
  protect_kernel_page(c, mfn_to_va(l2), true);
  protect_kernel_page(c, kTextPage, false);
  protect_kernel_page(c, kEdgePage, false);
  // 0xff marked the frames a kernel L1 maps that are page tables: they are L4/L2 (already there).
  for (unsigned i = 0; i < pool.protected_frame_count; ++i)
    if (pool.protected_frames[i].level == 0xff) pool.protected_frames[i].level = 0;
  // The hypervisor's: the tables behind its L4 slots, low memory.
  for (unsigned index = kFirstHypervisorSlot; index <= kLastHypervisorSlot; ++index) {
    PageTableEntry entry(read_slot(l4, index));
    if (entry.present() && pool.hypervisor_mfn_count < kMaxOtherFrames)
      pool.hypervisor_mfns[pool.hypervisor_mfn_count++] = entry.mfn().value;
  }
  pool.hypervisor_mfns[pool.hypervisor_mfn_count++] = 0x100;  // the hypervisor's image (multiboot header)
  pool.hypervisor_mfns[pool.hypervisor_mfn_count++] = 0x1;
  // Another's: the frames around our memory (dom0's below a domU's, free ones above dom0's).
  const FrameRun& block = pool.own_runs[0];  // the builder's block (empty if our memory is scattered)
  for (uint64_t k = 1; k <= 4 && pool.foreign_mfn_count < kMaxOtherFrames; ++k) {
    if (block.first > k) pool.foreign_mfns[pool.foreign_mfn_count++] = block.first - k;
    uint64_t above = block.first + block.count + k - 1;
    if (!is_own_frame(pool, above)) pool.foreign_mfns[pool.foreign_mfn_count++] = above;
  }
  if (pool.max_ram_page > 2) pool.foreign_mfns[pool.foreign_mfn_count++] = pool.max_ram_page - 2;
}

// Event channels that exist now are the kernel's (its timer): never closed or moved. Xen
// answers EVTCHNOP_status; where that is missing, a send to a bound VIRQ port succeeds.
bool port_in_use(uint32_t port) {
  evtchn_status_t status{};
  status.dom = DOMID_SELF;
  status.port = port;
  long rc = xen::event_channel_op(EVTCHNOP_status, &status);
  if (rc == 0) return status.status != EVTCHNSTAT_closed;
  evtchn_send_t send{port};
  return rc == -XEN_ENOSYS && xen::event_channel_op(EVTCHNOP_send, &send) == 0;
}

void collect_ports(Pool& pool) {
  for (uint32_t port = 1; port < 64 && pool.protected_port_count < kMaxPorts; ++port)
    if (port_in_use(port)) pool.protected_ports[pool.protected_port_count++] = uint16_t(port);
}

// Our memory as a few runs of frames: the builder's block and the initrd's frames, which the
// hypervisor hands over where the boot loader put them. The largest run comes first. More runs
// than the pool holds: none is recorded, and the checks fall back to the M2P and the P2M.
void find_own_memory(Campaign& c) {
  Pool& pool = c.pool;
  FrameRun runs[kMaxOwnRuns];
  unsigned count = 0;
  bool complete = true;
  for (uint64_t pfn = 0; pfn < c.nr_pages && complete; ++pfn) {
    uint64_t mfn = boot_info.p2m[pfn];
    unsigned i = 0;
    while (i < count && runs[i].first + runs[i].count != mfn) ++i;
    if (i < count) {
      ++runs[i].count;
    } else if (count < kMaxOwnRuns) {
      runs[count++] = {mfn, 1};
    } else {
      complete = false;
    }
  }
  c.own_runs_complete = complete;
  pool.own_run_count = complete ? count : 0;
  pool.own_count = complete ? c.nr_pages : 0;
  for (unsigned i = 0; i < pool.own_run_count; ++i) pool.own_runs[i] = runs[i];
  for (unsigned i = 1; i < pool.own_run_count; ++i)  // largest first
    if (pool.own_runs[i].count > pool.own_runs[0].count) {
      FrameRun t = pool.own_runs[0];
      pool.own_runs[0] = pool.own_runs[i];
      pool.own_runs[i] = t;
    }
}

// The kernel's text as runs of frames (write_protect_kernel_text maps it read-only only): the
// generator never names them where a table type could be taken, nor writes entries naming them.
void find_kernel_text(Pool& pool) {
  FrameRun* run = nullptr;
  for (uint64_t va = reinterpret_cast<uint64_t>(_image_start); va < reinterpret_cast<uint64_t>(_text_end); va += 4096) {
    const uint64_t mfn = va_to_mfn(va).value;
    if (run != nullptr && run->first + run->count == mfn) {
      ++run->count;
      continue;
    }
    if (pool.kernel_text_run_count == kMaxOwnRuns)
      panic("fuzz: the kernel's text is in more than %u runs of frames", kMaxOwnRuns);
    run = &pool.kernel_text[pool.kernel_text_run_count++];
    *run = FrameRun{mfn, 1};
  }
}

// The initial tree: L1s mapping data frames (and other tables, read-only, for the alias
// path), L2s and L3s linking them, the kernel L4's fuzz slots and the two clones of the kernel
// L4 (slot 511 = the kernel's L3, pinned) linking the L3s. Each L1 hangs from one L2 slot
// (writable pagetables detach only those); the last two hang from none (pinned only).
constexpr unsigned kFirstL1 = 14, kFirstL2 = 6, kFirstL3 = 2;

uint64_t link(const Pool& pool, unsigned table) { return (pool.table_mfn[table] << 12) | kTableBits; }

uint64_t initial_entry(const Campaign& c, unsigned table, unsigned index) {
  const Pool& pool = c.pool;
  unsigned l1_count = pool.table_count - kFirstL1;
  if (table >= kFirstL1) {
    if (index < 16)
      return (pool.data_mfn[(table * 3 + index) % pool.data_count] << 12) | ((index & 1) ? kReadOnly : kWritable);
    if (index == 16)
      return (pool.table_mfn[kFirstL1 + (table - kFirstL1 + 1) % l1_count] << 12) | kReadOnly;  // another L1
    if (index == 17) return (pool.table_mfn[kFirstL2 + table % 8] << 12) | kReadOnly;           // an L2
    if (index == 18) return (pool.protected_frames[5 % pool.protected_frame_count].mfn << 12) | kReadOnly;
    return 0;
  }
  if (table >= kFirstL2) return index < 2 ? link(pool, kFirstL1 + ((table - kFirstL2) * 2 + index) % l1_count) : 0;
  if (table >= kFirstL3) return index < 2 ? link(pool, kFirstL2 + ((table - kFirstL3) * 2 + index) % 8) : 0;
  if (index == kKernelL4Slot) return c.kernel_slot_value;
  if (index == kFuzzL4Slots[0]) return link(pool, 4 + table);
  if (index == kFuzzL4Slots[1]) return link(pool, 2 + table);
  return 0;
}

void build_tables(Campaign& c) {
  Pool& pool = c.pool;
  c.kernel_slot_value = read_slot(kernel_l4(), kKernelL4Slot);
  long rc = 0;
  for (unsigned t = pool.table_count; t-- > pool.clone_count;)  // L1s first, then the tables that link them
    for (unsigned k = 0; k < 512; ++k)
      if (uint64_t value = initial_entry(c, t, k)) rc |= mmu_update_raw(pool.table_mfn[t] * 4096 + k * 8ull, value);
  if (rc) panic("fuzz: building the scratch tables: %ld", rc);
  for (unsigned clone = 0; clone < pool.clone_count; ++clone) {
    for (unsigned k = 0; k < 512; ++k)
      if (uint64_t value = initial_entry(c, clone, k))
        rc |= mmu_update_raw(pool.table_mfn[clone] * 4096 + k * 8ull, value);
    if (rc == 0) rc = pv::ops.raw_mmuext(MMUEXT_PIN_L4_TABLE, pool.table_mfn[clone]);
  }
  if (rc) {
    print("fuzz: the clones of the kernel L4 could not be pinned (%ld): no base switches to them\n", rc);
    pool.clone_count = 0;
  }
  // The L1s pinned too: typed whatever happens to the links above them, so direct writes to
  // them take the writable-pagetable path until the fuzzer unpins and unlinks them.
  for (unsigned t = kFirstL1; t < pool.table_count; ++t) pv::ops.raw_mmuext(MMUEXT_PIN_L1_TABLE, pool.table_mfn[t]);
  rc = mmu_update_raw(pool.fuzz_slot_ma[0], link(pool, 2));
  rc |= mmu_update_raw(pool.fuzz_slot_ma[1], link(pool, 3));
  if (rc) panic("fuzz: linking the fuzz slots: %ld", rc);
  settle();
}

}  // namespace

uint64_t map_window_page(uint64_t va, uint64_t flags) {
  Pfn pfn = allocate_zeroed_frame();
  map_window_frame(va, pfn_to_mfn(pfn).value, flags);
  return pfn_to_mfn(pfn).value;
}

void map_window_frame(uint64_t va, uint64_t mfn, uint64_t flags) {
  Mfn l1 = kernel_l1_for(va);
  pv::PageTableSlot slot = table_slot(l1, lib::table_index(va, Level::l1), Level::l1);
  if (pv::ops.set_entry(slot, PageTableEntry::make(Mfn{mfn}, flags)) < 0 || pv::ops.flush() < 0)
    panic("fuzz: window page %lx", va);
  pv::ops.invalidate_page(va);
}

void settle() { pv::ops.raw_mmuext(MMUEXT_TLB_FLUSH_LOCAL, 0); }

// Back towards the initial tree, so the structure the operations need (L1s linked once, pinned,
// reachable, mapped at their own addresses) keeps coming back however the operations tore it
// down: every scratch frame's direct-map entry mapping it again, then every entry that differs
// from the initial tree set back (L1s first), the pins taken again, the fuzz slots relinked.
void rebuild(Campaign& c) {
  Pool& pool = c.pool;
  for (unsigned i = 0; i < pool.table_count; ++i)
    if (direct_map_target(c, i) != pool.table_mfn[i])
      mmu_update_raw(pool.direct_map_slot_ma[i], (pool.table_mfn[i] << 12) | kReadOnly);
  for (unsigned i = 0; i < pool.data_count; ++i)
    if (direct_map_target(c, kMaxTables + i) != pool.data_mfn[i])
      mmu_update_raw(pool.direct_map_slot_ma[kMaxTables + i], (pool.data_mfn[i] << 12) | kWritable);
  settle();
  for (unsigned t = pool.table_count; t-- > 0;) {
    auto* entries = reinterpret_cast<volatile uint64_t*>(pool.table_va[t]);
    for (unsigned k = 0; k < 512; ++k) {
      if (t < pool.clone_count && k == kKernelL4Slot) continue;
      uint64_t wanted = initial_entry(c, t, k);
      constexpr uint64_t kHardwareBits = kAccessedBit | kDirtyBit;
      if ((entries[k] & ~kHardwareBits) != (wanted & ~kHardwareBits))
        mmu_update_raw(pool.table_mfn[t] * 4096 + k * 8ull, wanted);
    }
    if (t >= kFirstL1) pv::ops.raw_mmuext(MMUEXT_PIN_L1_TABLE, pool.table_mfn[t]);
    if (t < pool.clone_count) pv::ops.raw_mmuext(MMUEXT_PIN_L4_TABLE, pool.table_mfn[t]);
  }
  mmu_update_raw(pool.fuzz_slot_ma[0], link(pool, 2));
  mmu_update_raw(pool.fuzz_slot_ma[1], link(pool, 3));
  settle();
}

uint64_t direct_map_target(const Campaign& c, unsigned slot_index) {
  volatile uint64_t* slot = c.direct_map_slot_va[slot_index];
  if (!slot) return ~0ull;
  uint64_t entry = *slot;
  return (entry & 1) ? (entry & kAddressBits) >> 12 : ~0ull;
}

uint64_t readable_va(const Campaign& c, uint64_t mfn) {
  const Pool& pool = c.pool;
  for (unsigned i = 0; i < pool.table_count; ++i)
    if (pool.table_mfn[i] == mfn) return direct_map_target(c, i) == mfn ? pool.table_va[i] : 0;
  for (unsigned i = 0; i < pool.data_count; ++i)
    if (pool.data_mfn[i] == mfn) return direct_map_target(c, kMaxTables + i) == mfn ? pool.data_va[i] : 0;
  if (mfn >= pool.max_ram_page) return 0;
  uint64_t pfn = machine_to_phys_mapping[mfn];
  if (pfn >= c.nr_pages || boot_info.p2m[pfn] != mfn || pfn >= page_allocator.end()) return 0;
  return pfn_to_va(Pfn{pfn});
}

uint64_t leaf_entry(const Campaign& c, uint64_t va) {
  uint64_t table = c.kernel_l4_va;
  for (int level = 4; level >= 1; --level) {
    unsigned index = unsigned((va >> (12 + 9 * (level - 1))) & 511);
    uint64_t entry = reinterpret_cast<volatile uint64_t*>(table)[index];
    if (level == 1) return entry;
    if (!(entry & 1) || (entry & kLargeBit)) return 0;
    table = readable_va(c, (entry & kAddressBits) >> 12);
    if (!table) return 0;
  }
  return 0;
}

bool setup(Campaign& c) {
  Pool& pool = c.pool;
  const start_info_t* si = boot_info.start_info;
  pool.privileged = si->flags & SIF_PRIVILEGED;
  pool.domid = pool.privileged ? 0 : 1;  // the boot domUs are 1..7; the first is the usual fuzzer
  pool.max_ram_page = uint64_t(xen::memory_op(XENMEM_maximum_ram_page, nullptr));
  c.nr_pages = boot_info.nr_pages;
  c.kernel_l4_va = boot_info.kernel_l4_va;
  c.shared_info_mfn = si->shared_info >> 12;
  c.pool.shared_info_mfn = c.shared_info_mfn;
  find_own_memory(c);
  find_kernel_text(c.pool);

  pool.table_count = kMaxTables;
  pool.clone_count = 2;
  for (unsigned i = 0; i < kMaxTables; ++i) {
    Mfn table = new_page_table_frame();
    pool.table_mfn[i] = table.value;
    c.table_pfn[i] = mfn_to_pfn(table).value;
    pool.table_va[i] = pfn_to_va(Pfn{c.table_pfn[i]});
    pool.table_level[i] = uint8_t(i < 2 ? 4 : i < 6 ? 3 : i < 14 ? 2 : 1);
  }
  pool.data_count = kMaxData;
  for (unsigned i = 0; i < kMaxData; ++i) {
    Pfn pfn = allocate_zeroed_frame();
    c.data_pfn[i] = pfn.value;
    pool.data_mfn[i] = pfn_to_mfn(pfn).value;
    pool.data_va[i] = pfn_to_va(pfn);
  }
  for (unsigned i = 0; i < kMaxTables + kMaxData; ++i) {
    if (i >= pool.table_count && i < kMaxTables) continue;
    uint64_t va = i < kMaxTables ? pool.table_va[i] : pool.data_va[i - kMaxTables];
    pv::PageTableSlot slot;
    if (!walk(kernel_l4(), va, Level::l1, slot)) panic("fuzz: no direct-map slot for %lx", va);
    pool.direct_map_slot_ma[i] = slot.machine_address;
    c.direct_map_slot_va[i] = slot.kernel_va;
  }
  Mfn l4 = kernel_l4();
  for (unsigned i = 0; i < kFuzzSlotCount; ++i) {
    pool.fuzz_slot_ma[i] = l4.machine_address() + kFuzzL4Slots[i] * 8ull;
    if (read_slot(l4, kFuzzL4Slots[i]) != 0) panic("fuzz: kernel L4 slot %u is in use", kFuzzL4Slots[i]);
  }
  build_window(c);
  collect_protected(c);
  collect_ports(pool);
  build_tables(c);
  setup_hv_frames(c);
  print(
      "fuzz: pool: %u tables (%u clones of the kernel L4), %u data frames, %u protected slots, %u protected frames, "
      "%u kernel event channels, memory mfns %lx+%lx in %u runs, max_ram_page %lx\n",
      pool.table_count, pool.clone_count, pool.data_count, pool.protected_slot_count, pool.protected_frame_count,
      pool.protected_port_count, pool.own_runs[0].first, pool.own_count, pool.own_run_count, pool.max_ram_page);
  return true;
}

uint64_t teardown(Campaign& c) {
  Pool& pool = c.pool;
  restore(c, ~0u);
  teardown_hv_frames(c);
  pv::ops.raw_mmuext(MMUEXT_NEW_USER_BASEPTR, 0);
  pv::ops.raw_mmuext(MMUEXT_NEW_BASEPTR, pool.kernel_l4_mfn);
  for (unsigned i = 0; i < kFuzzSlotCount; ++i) mmu_update_raw(pool.fuzz_slot_ma[i], 0);
  // The M2P entries of the scratch frames back to the truth (the allocator's free() reads it).
  for (unsigned i = 0; i < pool.table_count; ++i)
    mmu_update_raw((pool.table_mfn[i] << 12) | MMU_MACHPHYS_UPDATE, c.table_pfn[i]);
  for (unsigned i = 0; i < pool.data_count; ++i)
    mmu_update_raw((pool.data_mfn[i] << 12) | MMU_MACHPHYS_UPDATE, c.data_pfn[i]);
  // Unpin everything, then point every direct-map address of ours back at its frame, read-only.
  for (unsigned pass = 0; pass < 3; ++pass)
    for (unsigned i = 0; i < pool.table_count + pool.data_count; ++i) {
      uint64_t mfn = i < pool.table_count ? pool.table_mfn[i] : pool.data_mfn[i - pool.table_count];
      pv::ops.raw_mmuext(MMUEXT_UNPIN_TABLE, mfn);
    }
  for (unsigned i = 0; i < pool.table_count; ++i)
    mmu_update_raw(pool.direct_map_slot_ma[i], (pool.table_mfn[i] << 12) | kReadOnly);
  for (unsigned i = 0; i < pool.data_count; ++i)
    mmu_update_raw(pool.direct_map_slot_ma[kMaxTables + i], (pool.data_mfn[i] << 12) | kReadOnly);
  settle();
  // Empty every scratch frame's entries, top levels first, until nothing changes: whatever is
  // still typed loses its references as the entries above it go.
  for (unsigned pass = 0; pass < 6; ++pass) {
    unsigned cleared = 0;
    for (unsigned i = 0; i < pool.table_count + pool.data_count; ++i) {
      uint64_t mfn = i < pool.table_count ? pool.table_mfn[i] : pool.data_mfn[i - pool.table_count];
      auto* entries = reinterpret_cast<volatile uint64_t*>(i < pool.table_count ? pool.table_va[i]
                                                                                : pool.data_va[i - pool.table_count]);
      for (unsigned k = 0; k < 512; ++k) {
        if (entries[k] == 0) continue;
        if (mmu_update_raw(mfn * 4096 + k * 8, 0) == 0) ++cleared;
      }
    }
    if (cleared == 0) break;
  }
  // Writable again and back to the allocator; a frame that cannot be made writable still has
  // a page-table type somewhere, so it stays out.
  uint64_t left = 0;
  for (unsigned i = 0; i < pool.table_count + pool.data_count; ++i) {
    bool table = i < pool.table_count;
    uint64_t mfn = table ? pool.table_mfn[i] : pool.data_mfn[i - pool.table_count];
    uint64_t pfn = table ? c.table_pfn[i] : c.data_pfn[i - pool.table_count];
    uint64_t slot = pool.direct_map_slot_ma[table ? i : kMaxTables + (i - pool.table_count)];
    if (mmu_update_raw(slot, (mfn << 12) | kWritable) != 0) {
      if (left++ < 8)
        print("fuzz: teardown: frame %lx (%s %u) cannot be made writable again\n", mfn, table ? "table" : "data",
              table ? i : i - pool.table_count);
      continue;
    }
    page_allocator.free(Pfn{pfn});
  }
  settle();
  return left;
}

}  // namespace kernel::fuzz
