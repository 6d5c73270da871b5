// selftest=hostile-smp: the vCPUs of one domain racing each other on the PV MMU and on event
// channels (issue 30, item 8). Every other vCPU is brought up as selftest=vcpus does it
// (kernel/smp); each race then runs a fixed number of rounds, each vCPU playing its roles (role
// r on vCPU r mod the vCPU count, so two vCPUs play them all), every answer it gets tallied
// against what Xen 4.17 answers (do_mmu_update, do_mmuext_op, do_update_va_mapping,
// memory_op, event_channel_op); only vCPU 0 prints. After each race the state left is checked
// and, on our hypervisor as dom0, the frame audit; the machine's own audit runs at its end.
//
//   1. pin-race      an L1 pinned, unpinned, linked into and unlinked from a pinned L2 by one
//                    vCPU, while another mmu_updates its entries and vCPU 0 stores into it
//                    directly (emulated, or a fault while it is no table);
//   2. free-race     one vCPU populates and gives back (decrease_reservation) a frame while
//                    another maps it with update_va_mapping and mmu_update: a mapping taken
//                    holds the frame, one refused leaves nothing;
//   3. shared-l1     two vCPUs writing one L1 at once (mmu_update and direct stores), each its
//                    own entries: every entry ends as its last writer left it, validated;
//   4. stale-tlb     a vCPU keeps a writable translation of a frame while another removes its
//                    mapping without a flush and pins the frame as an L1: the store through the
//                    stale translation faults (the type change flushed the other CPU), and the
//                    table never holds what was stored;
//   4b. detach-race one vCPU stores good and bad entries into a pinned L1 that no address space
//                    links (what a fork's child tables are) while another makes MMU hypercalls:
//                    under ptwr=writable / adaptive in a domain on several CPUs the stores detach
//                    the table and the hypercalls reattach it (the storer's writable translation
//                    flushed before the comparison); after the last hypercall every bad entry
//                    was refused and every good one kept;
//   5. vcpu-race     a vCPU taken down and brought up by another, taking itself down, while a
//                    third initialises it (good and bad contexts: -EEXIST) and vCPU 0 looks
//                    at it and sends it IPIs (bad contexts of a vCPU without one: selftest=vcpus);
//   6. evtchn-race   bind_ipi / close of a port racing EVTCHNOP_send to it, and an IPI flood
//                    (EVTCHNOP_send on bind_ipi ports) against a working vCPU;
//   7. long-hypercall one vCPU in batches of 8192 mmu_update requests while the others make
//                    short hypercalls (how many while a batch runs is reported).
#include "arch/event_channel_ops.h"
#include "lib/atomic.h"
#include "arch/hypercall.h"
#include "arch/probe.h"
#include "arch/xen.h"
#include "kernel/boot/boot_info.h"
#include "kernel/boot/frames.h"
#include "kernel/memory/direct_map.h"
#include "kernel/memory/page_allocator.h"
#include "kernel/memory/physical_memory.h"
#include "kernel/smp/vcpus.h"
#include "selftest/memory/memory_selftests.h"
#include "lib/cmdline.h"
#include "selftest/selftest_page_tables.h"

namespace kernel {
namespace {
using namespace page_table_tests;

constexpr uint64_t kTimeout = 60'000'000'000;  // 60 s of guest time for a race's every role
constexpr unsigned kMaxRoles = 8;
constexpr uint64_t kGuestKernelMark = 1ull << 52;  // Xen's _PAGE_GUEST_KERNEL, which validation may add

// Raw hypercalls: pv::ops keeps counters and a batch of its own, which is vCPU 0's alone.
long mmu_update(uint64_t machine_address, uint64_t value) {
  mmu_update_t request{machine_address, value};
  unsigned done = 0;
  return arch::hypercall(__HYPERVISOR_mmu_update, arch::arg(&request), 1, arch::arg(&done), DOMID_SELF);
}
long mmuext(unsigned command, uint64_t mfn) {
  mmuext_op_t op{};
  op.cmd = command;
  op.arg1.mfn = mfn;
  unsigned done = 0;
  return arch::hypercall(__HYPERVISOR_mmuext_op, arch::arg(&op), 1, arch::arg(&done), DOMID_SELF);
}
long update_va(uint64_t va, uint64_t value, uint64_t flags) {
  return arch::hypercall(__HYPERVISOR_update_va_mapping, va, value, flags);
}
long reservation(unsigned op, xen_pfn_t* list) {
  xen_memory_reservation_t r{};
  set_xen_guest_handle(r.extent_start, list);
  r.nr_extents = 1;
  r.domid = DOMID_SELF;
  return arch::hypercall(__HYPERVISOR_memory_op, op, arch::arg(&r));
}
long current_pages() {
  domid_t self = DOMID_SELF;
  return arch::hypercall(__HYPERVISOR_memory_op, XENMEM_current_reservation, arch::arg(&self));
}
void yield() { xen::sched_op(SCHEDOP_yield, nullptr); }
long invlpg_local(uint64_t va) {
  mmuext_op_t op{};
  op.cmd = MMUEXT_INVLPG_LOCAL;
  op.arg1.linear_addr = va;
  unsigned done = 0;
  return arch::hypercall(__HYPERVISOR_mmuext_op, arch::arg(&op), 1, arch::arg(&done), DOMID_SELF);
}
using guest_atomic::load_acquire;
using guest_atomic::store_release;

// What one role was answered, each answer counted as Xen's main one, Xen's other one, or
// neither (the first such kept).
struct alignas(64) Tally {
  uint64_t main = 0, other = 0, wrong = 0;
  long first_wrong = 0;
  void count(long rc, long expected, long alternative, long third = 1L << 40) {
    if (rc == expected)
      ++main;
    else if (rc == alternative || rc == third)
      ++other;
    else if (wrong++ == 0)
      first_wrong = rc;
  }
};

// The race harness: role r runs on vCPU r % vcpus, each vCPU its roles in turn each round, all
// starting together.
using Role = void (*)(unsigned round);
struct Race {
  Role roles[kMaxRoles] = {};
  Tally tallies[kMaxRoles];
  unsigned role_count = 0, rounds = 0, vcpus = 1;
  uint32_t ready = 0, finished = 0;
} race;

long play(uint64_t) {
  const unsigned me = current_vcpu_id();
  __atomic_fetch_add(&race.ready, 1, __ATOMIC_SEQ_CST);
  while (load_acquire(race.ready) < race.vcpus) yield();
  for (unsigned round = 0; round < race.rounds; ++round)
    for (unsigned r = me; r < race.role_count; r += race.vcpus) race.roles[r](round);
  __atomic_fetch_add(&race.finished, 1, __ATOMIC_SEQ_CST);
  return 0;
}

// Runs the roles; false if a vCPU did not finish in time.
template <unsigned N>
bool run_race(unsigned vcpus, unsigned rounds, const Role (&roles)[N], void (*until_all_finished)() = nullptr) {
  static_assert(N <= kMaxRoles);
  race.role_count = 0;
  for (Tally& tally : race.tallies) tally = Tally{};
  for (Role role : roles) race.roles[race.role_count++] = role;
  race.rounds = rounds;
  race.vcpus = vcpus;
  store_release(race.ready, 0u);
  store_release(race.finished, 0u);
  for (unsigned id = 1; id < vcpus; ++id) smp::post(id, play, 0);
  play(0);
  // vCPU 0, its roles done, may have to keep the others going (bring a vCPU up again).
  const uint64_t deadline = smp::now_ns() + kTimeout;
  while (until_all_finished && load_acquire(race.finished) < vcpus && smp::now_ns() < deadline) {
    until_all_finished();
    yield();
  }
  bool all = true;
  for (unsigned id = 1; id < vcpus; ++id) {
    long result = -1;
    all = smp::wait(id, result, kTimeout) && all;
  }
  return all;
}

// Reports a role's tally: no answer outside Xen's; the counts as notes.
void report(SelfTest& test, unsigned role, const char* what) {
  const Tally& t = race.tallies[role];
  test.check(what, long(t.wrong), 0);
  if (t.wrong) test.note("  the first answer that was not Xen's", t.first_wrong);
  test.note("  answered as mostly", long(t.main));
  test.note("  answered the other way", long(t.other));
}

alignas(4096) uint8_t data_page[4096];  // what the raced tables map
// The hypervisor detaches this domain's unreachable tables (the domU command line's
// hostile_smp_detaches: ours, ptwr=writable or adaptive, sched_smp=1): a direct store of a bad
// entry into one may land while it is detached, and is refused at its reattach.
bool detaches = false;
Mfn data_mfn() { return va_to_mfn(reinterpret_cast<uint64_t>(data_page)); }

// A zeroed frame to be a page table: read-only in the direct map.
Mfn table_frame() {
  const Pfn pfn = allocate_zeroed_frame();
  const Mfn mfn = pfn_to_mfn(pfn);
  pv::ops.set_kernel_mapping(pfn_to_va(pfn), PageTableEntry::make(mfn, kReadOnly));
  return mfn;
}
// Back to the allocator, writable again (if it is no table any more).
void release(Mfn mfn) {
  const Pfn pfn = mfn_to_pfn(mfn);
  if (pv::ops.set_kernel_mapping(pfn_to_va(pfn), PageTableEntry::make(mfn, kWritable)) == 0) page_allocator.free(pfn);
}

void audit(SelfTest& test) { check_audit(test); }

// ---- 1. pin-race ------------------------------------------------------------------------

Mfn pin_l1, pin_l2;
constexpr unsigned kPinRounds = 200;

// vCPU 0: stores into the L1 through its read-only direct mapping: emulated (or, under
// ptwr=writable with one vCPU, through a detach) while it is a table, a fault while it is not.
void pin_race_store(unsigned round) {
  volatile uint64_t* entries = entries_of(pin_l1);
  race.tallies[0].count(probe_store64(&entries[64 + round % 64], entry(data_mfn(), kUserReadOnly)), 0, 1);
}
// vCPU 1: pin, unpin, link into the pinned L2, unlink, in turn.
void pin_race_pinner(unsigned round) {
  Tally& t = race.tallies[1];
  switch (round % 4) {
    case 0: t.count(mmuext(MMUEXT_PIN_L1_TABLE, pin_l1.value), 0, -XEN_EINVAL, -XEN_EBUSY); break;
    case 1: t.count(mmuext(MMUEXT_UNPIN_TABLE, pin_l1.value), 0, -XEN_EINVAL); break;
    case 2:
      t.count(mmu_update(pin_l2.machine_address(), entry(pin_l1, PageTableEntry::kTableFlags)), 0, -XEN_EINVAL,
              -XEN_EBUSY);
      break;
    default: t.count(mmu_update(pin_l2.machine_address(), 0), 0, -XEN_EINVAL); break;
  }
}
// vCPU 2: mmu_update of its own entries, a writable mapping of the data page and then empty.
void pin_race_updater(unsigned round) {
  const uint64_t value = round & 1 ? 0 : entry(data_mfn(), kWritable);
  race.tallies[2].count(mmu_update(pin_l1.machine_address() + 8 * (128 + round % 64), value), 0, -XEN_EINVAL);
}
// vCPU 3: a mapping of the L1 itself, writable: refused while it is a table (-EBUSY: its type
// cannot become writable); while it is not, a plain store into a data frame (and undone at
// once): a pin or link meanwhile is the one refused (-EBUSY, the entry fails validation).
// Xen 4.17, which takes no lock across CPUs, also answers -EINVAL while another CPU's pin is
// still validating the table (neither lockable as a table nor writable); ours serialises the
// two and never does.
void pin_race_mapper(unsigned round) {
  const uint64_t slot = pin_l1.machine_address() + 8 * (256 + round % 64);
  const long rc = mmu_update(slot, entry(pin_l1, kWritable));
  race.tallies[3].count(rc, -XEN_EBUSY, 0, -XEN_EINVAL);
  if (rc != 0) return;
  // Undone at once; on Xen 4.17 the store is refused (-EINVAL) while another CPU's pin is
  // validating the table (which then fails on this very entry): it is tried again.
  long undone = mmu_update(slot, 0);
  for (unsigned tries = 0; undone != 0 && tries < 10'000; ++tries) {
    yield();
    undone = mmu_update(slot, 0);
  }
  race.tallies[4].count(undone, 0, 0);
}

void pin_race(SelfTest& test, unsigned vcpus) {
  pin_l1 = table_frame();
  pin_l2 = table_frame();
  test.check("pin-race: pin the L2 the L1 is linked into", pv::ops.raw_mmuext(MMUEXT_PIN_L2_TABLE, pin_l2.value), 0);
  test.check("pin-race: every vCPU ran its rounds",
             run_race(vcpus, kPinRounds, {pin_race_store, pin_race_pinner, pin_race_updater, pin_race_mapper}), 1);
  report(test, 0, "  vCPU 0's direct stores: stored (emulated) or faulted (no table)");
  report(test, 1, "  pin / unpin / link / unlink: done, -EINVAL (not pinned, pinned) or -EBUSY (a bad entry)");
  report(test, 2, "  mmu_update of entries: done or -EINVAL");
  report(test, 3,
         "  a writable mapping of the L1 in itself: -EBUSY while it is a table (-EINVAL while validated), else stored");
  report(test, 4, "  and removed again (at once, or once the pin that found it failed)");
  // Left: unlinked, unpinned; then the entries are what was last written, every one valid.
  mmu_update(pin_l2.machine_address(), 0);
  mmuext(MMUEXT_UNPIN_TABLE, pin_l1.value);
  bool self_mapped = false;
  for (unsigned i = 256; i < 320; ++i) self_mapped = self_mapped || entries_of(pin_l1)[i] != 0;
  test.check("  no writable self-mapping was left in it", self_mapped, false);
  test.check("  pinned again: every entry left is valid", pv::ops.raw_mmuext(MMUEXT_PIN_L1_TABLE, pin_l1.value), 0);
  bool only_data = true;
  for (unsigned i = 0; i < 512; ++i) {
    const PageTableEntry e(entries_of(pin_l1)[i]);
    only_data = only_data && (e.raw() == 0 || e.mfn() == data_mfn());
  }
  test.check("  its entries map the data page or nothing", only_data, true);
  test.check("  unpin it", pv::ops.raw_mmuext(MMUEXT_UNPIN_TABLE, pin_l1.value), 0);
  test.check("  unpin the L2", pv::ops.raw_mmuext(MMUEXT_UNPIN_TABLE, pin_l2.value), 0);
  release(pin_l1);
  release(pin_l2);
  audit(test);
}

// ---- 2. free-race -----------------------------------------------------------------------

constexpr unsigned kFreeRounds = 150;
uint64_t free_gpfn;
uint64_t published_mfn;        // the frame the freer populated last (0: none yet)
uint32_t published_round;      // the freer's round that published it, plus one
uint64_t mapped_reads;         // reads through a mapping taken
pv::PageTableSlot free_slot_;  // the scratch slot the mapper maps into
uint64_t free_va;

// vCPU 0: populate the frame, say which it is, give it back.
void free_race_freer(unsigned round) {
  xen_pfn_t list[1] = {free_gpfn};
  // 0 extents while the frame given back the round before is still mapped: it counts until
  // its last mapping goes, and the domain is at its maximum.
  const long rc = reservation(XENMEM_populate_physmap, list);
  race.tallies[0].count(rc, 1, 0);
  store_release(published_mfn, rc == 1 ? uint64_t(list[0]) : 0);
  __atomic_fetch_add(&published_round, 1u, __ATOMIC_SEQ_CST);
  if (rc != 1) return;
  for (unsigned spin = 0; spin < (round % 8) * 200; ++spin) __builtin_ia32_pause();  // windows of all sizes
  race.tallies[4].count(reservation(XENMEM_decrease_reservation, list), 1, 1);
}
// vCPU 1: map the frame published last, by update_va_mapping (even rounds) or mmu_update (odd),
// read it, unmap. Xen: done while the domain owns the frame, -EBUSY once it is given back
// (get_page_from_l1e: a frame whose owner is not the domain's).
void free_race_mapper(unsigned round) {
  // Each round waits for the freer's next frame (bounded: the freer may have ended).
  for (unsigned tries = 0; load_acquire(published_round) <= round && tries < 100'000; ++tries) yield();
  const uint64_t mfn = load_acquire(published_mfn);
  if (!mfn) return;
  const uint64_t value = entry(Mfn{mfn}, kReadOnly);
  const long rc = round & 1 ? mmu_update(free_slot_.machine_address, value) : update_va(free_va, value, UVMF_INVLPG);
  race.tallies[1].count(rc, 0, -XEN_EBUSY);
  if (rc != 0) return;
  // The frame is held by the mapping (given back or not): it reads (what it holds is not
  // defined: Xen does not scrub a frame a live domain gives back).
  uint64_t word = 0;
  invlpg_local(free_va);
  race.tallies[3].count(probe_load64(reinterpret_cast<volatile uint64_t*>(free_va), &word), 0, 0);
  ++mapped_reads;
  race.tallies[2].count(update_va(free_va, 0, UVMF_INVLPG), 0, 0);
}

void free_race(SelfTest& test, unsigned vcpus) {
  // A domU has no room above its reservation: one frame of its own is given back first, and
  // its pseudo-physical frame is the one raced (populated again after).
  const Pfn own = allocate_zeroed_frame();
  pv::ops.set_kernel_mapping(pfn_to_va(own), PageTableEntry(0));
  xen_pfn_t list[1] = {pfn_to_mfn(own).value};
  test.check("free-race: give one frame back first", reservation(XENMEM_decrease_reservation, list), 1);
  const long pages = current_pages();
  free_gpfn = own.value;
  free_slot_ = scratch_slot();
  free_va = scratch_va();
  const uint64_t before = read_entry(free_slot_).raw();
  store_release(published_mfn, uint64_t{0});
  store_release(published_round, 0u);
  test.check("free-race: every vCPU ran its rounds", run_race(vcpus, kFreeRounds, {free_race_freer, free_race_mapper}),
             1);
  report(test, 0, "  populate_physmap of one frame: 1 extent (0 while the last one is still mapped)");
  report(test, 4, "  decrease_reservation of it (mapped or not): 1 extent");
  report(test, 1, "  mapping it from another vCPU: done, or -EBUSY once given back");
  report(test, 2, "  the mapping removed");
  report(test, 3, "  a mapping taken reads (the mapping holds the frame)");
  test.note("  reads through a mapping taken", long(mapped_reads));
  test.check("  the scratch slot restored", pv::ops.raw_mmu_update(free_slot_.machine_address, before), 0);
  pv::ops.invalidate_page(free_va);
  test.check("  current_reservation back where it was", current_pages(), pages);
  list[0] = own.value;
  test.check("  the frame given back first populated again", reservation(XENMEM_populate_physmap, list), 1);
  const_cast<xen_pfn_t*>(boot_info.p2m)[own.value] = list[0];  // the new frame behind it, as a balloon does
  test.check("  and mapped again",
             pv::ops.set_kernel_mapping(pfn_to_va(own), PageTableEntry::make(Mfn{list[0]}, kWritable)), 0);
  page_allocator.free(own);
  audit(test);
}

// ---- 3. shared-l1 -----------------------------------------------------------------------

Mfn shared_l1;
constexpr unsigned kSharedRounds = 256;
uint64_t last_written[2][64];

// vCPU 0 stores directly into entries 0..63 (emulated: a domain with several vCPUs up detaches
// nothing), vCPU 1 mmu_updates entries 64..127; each keeps what it wrote last.
void shared_store(unsigned round) {
  const unsigned i = round % 64;
  const uint64_t value = round & 64 ? 0 : entry(data_mfn(), kUserReadOnly);
  race.tallies[0].count(probe_store64(&entries_of(shared_l1)[i], value), 0, 0);
  last_written[0][i] = value;
}
void shared_update(unsigned round) {
  const unsigned i = round % 64;
  const uint64_t value = round & 64 ? 0 : entry(data_mfn(), kWritable);
  race.tallies[1].count(mmu_update(shared_l1.machine_address() + 8 * (64 + i), value), 0, 0);
  last_written[1][i] = value;
}
// A third writer of the same entries as vCPU 1, with the same values: a lost or torn update
// would show as an entry neither wrote.
void shared_update_twin(unsigned round) {
  const unsigned i = (round + 32) % 64;
  race.tallies[2].count(mmu_update(shared_l1.machine_address() + 8 * (64 + i), entry(data_mfn(), kWritable)), 0, 0);
}

void shared_l1_race(SelfTest& test, unsigned vcpus) {
  shared_l1 = table_frame();
  test.check("shared-l1: pin the L1", pv::ops.raw_mmuext(MMUEXT_PIN_L1_TABLE, shared_l1.value), 0);
  test.check("shared-l1: every vCPU ran its rounds",
             run_race(vcpus, kSharedRounds, {shared_store, shared_update, shared_update_twin}), 1);
  report(test, 0, "  direct stores into the pinned L1 (emulated): every one stored");
  report(test, 1, "  mmu_update of its other entries: every one done");
  report(test, 2, "  a second vCPU's mmu_update of the same entries: every one done");
  bool direct_ok = true, updates_ok = true;
  for (unsigned i = 0; i < 64; ++i) {
    direct_ok = direct_ok && (entries_of(shared_l1)[i] & ~kGuestKernelMark) == last_written[0][i];
    const uint64_t e = entries_of(shared_l1)[64 + i];
    // Validation adds US and Xen's guest-kernel mark (bit 52) to a kernel's entry.
    updates_ok =
        updates_ok &&
        (e == 0 || (PageTableEntry(e).mfn() == data_mfn() && (e & 0xfff) == (kWritable | PageTableEntry::kUser)));
  }
  test.check("  each directly stored entry is what was stored last", direct_ok, true);
  test.check("  each updated entry is one of the values written, whole", updates_ok, true);
  if (!updates_ok)
    for (unsigned i = 0; i < 4; ++i) test.note("  an updated entry", long(entries_of(shared_l1)[64 + i]));
  test.check("  unpin it", pv::ops.raw_mmuext(MMUEXT_UNPIN_TABLE, shared_l1.value), 0);
  test.check("  pin it again: every entry valid", pv::ops.raw_mmuext(MMUEXT_PIN_L1_TABLE, shared_l1.value), 0);
  test.check("  and unpin it", pv::ops.raw_mmuext(MMUEXT_UNPIN_TABLE, shared_l1.value), 0);
  release(shared_l1);
  audit(test);
}

// ---- 4. stale-tlb -----------------------------------------------------------------------

constexpr unsigned kStaleRounds = 20;
Mfn stale_frame;               // the frame vCPU 0 keeps a writable translation of
uint64_t stale_va;             // where: its direct-map address
pv::PageTableSlot stale_slot;  // its direct-map entry
uint32_t stale_step;           // 1: vCPU 0 holds the translation; 2: vCPU 1 made the frame an L1

// vCPU 0: writes the frame (its translation cached), waits while vCPU 1 removes the mapping
// without a flush and pins the frame as an L1, then stores through the old translation.
void stale_holder(unsigned) {
  volatile uint64_t* word = reinterpret_cast<volatile uint64_t*>(stale_va);
  while (load_acquire(stale_step) != 0) yield();  // the round before undone
  invlpg_local(stale_va);                         // the read-only translation of the round before
  *word = 0;
  store_release(stale_step, 1u);
  while (load_acquire(stale_step) != 2) __builtin_ia32_pause();
  // A writable mapping of the table itself, had the store landed. Where the domain detaches
  // tables (hostile_smp_detaches) it may land in the detached table, which nothing walks, and
  // be refused at its reattach (tally 6).
  race.tallies[0].count(probe_store64(word, entry(stale_frame, kUserWritable)), 1, detaches ? 0 : 1);
  store_release(stale_step, 3u);
}
void stale_pinner(unsigned) {
  while (load_acquire(stale_step) != 1) yield();
  race.tallies[1].count(mmu_update(stale_slot.machine_address, entry(stale_frame, kReadOnly)), 0, 0);
  race.tallies[2].count(mmuext(MMUEXT_PIN_L1_TABLE, stale_frame.value), 0, 0);
  store_release(stale_step, 2u);
  while (load_acquire(stale_step) != 3) yield();
  race.tallies[3].count(entries_of(stale_frame)[0] == 0 ? 0 : 1, 0, detaches ? 1 : 0);
  race.tallies[4].count(mmuext(MMUEXT_UNPIN_TABLE, stale_frame.value), 0, 0);
  // The unpin is an MMU operation: a table detached was reattached first, the store refused.
  race.tallies[6].count(entries_of(stale_frame)[0] == 0 ? 0 : 1, 0, 0);
  race.tallies[5].count(mmu_update(stale_slot.machine_address, entry(stale_frame, kWritable)), 0, 0);
  store_release(stale_step, 0u);
}

void stale_tlb_race(SelfTest& test, unsigned vcpus) {
  if (vcpus < 2) return;
  const Pfn pfn = allocate_zeroed_frame();
  stale_frame = pfn_to_mfn(pfn);
  stale_va = pfn_to_va(pfn);
  walk(kernel_l4(), stale_va, Level::l1, stale_slot);
  store_release(stale_step, 0u);
  // Two roles only, on vCPUs 0 and 1 whatever the count (the others have none).
  test.check("stale-tlb: both vCPUs ran their rounds", run_race(2, kStaleRounds, {stale_holder, stale_pinner}), 1);
  report(test, 0, "  vCPU 0's store through its stale writable translation faults");
  report(test, 1, "  vCPU 1's mmu_update making the mapping read-only (no flush)");
  report(test, 2, "  vCPU 1's pin of the frame as an L1");
  report(test, 3,
         detaches ? "  the store never landed in the table, or only while it was detached"
                  : "  the store never landed in the table");
  report(test, 4, "  unpin it");
  report(test, 6, "  no such entry in the table after the unpin (refused at reattach, if detached)");
  report(test, 5, "  writable again");
  pv::ops.invalidate_page(stale_va);
  page_allocator.free(pfn);
  audit(test);
}

// ---- 4b. detach-race ---------------------------------------------------------------------

constexpr unsigned kDetachRounds = 20, kDetachStores = 16;
Mfn detach_l1;            // pinned, linked nowhere: a write into it is an inactive detach
uint32_t detach_step;     // 2 * round + 1: vCPU 0 stores; 2 * round + 2: it is done
uint32_t detach_checked;  // round + 1: vCPU 1 checked the round's entries

// vCPU 0: in each round, 16 stores into its own 16 entries, through the read-only direct
// mapping: a read-only mapping of a data page (kept, emulated or detached) and a writable
// mapping of the table itself (refused: a fault if emulated, refused at reattach if detached).
void detach_storer(unsigned round) {
  volatile uint64_t* entries = entries_of(detach_l1);
  while (load_acquire(detach_checked) != round) yield();
  store_release(detach_step, 2 * round + 1);
  for (unsigned i = 0; i < kDetachStores; ++i) {
    volatile uint64_t* slot = &entries[round * kDetachStores + i];
    if (i % 2)
      race.tallies[0].count(probe_store64(slot, entry(data_mfn(), kUserReadOnly)), 0, 0);
    else
      race.tallies[1].count(probe_store64(slot, entry(detach_l1, kUserWritable)), 1, detaches ? 0 : 1);
  }
  store_release(detach_step, 2 * round + 2);
}
// vCPU 1: MMU hypercalls while vCPU 0 stores (each reattaches what is detached), one more
// after; then every entry of the round is what the rules let stand.
void detach_reattacher(unsigned round) {
  while (load_acquire(detach_step) < 2 * round + 1) yield();
  while (load_acquire(detach_step) < 2 * round + 2) race.tallies[2].count(empty_mmuext_op(), 0, 0);
  race.tallies[2].count(empty_mmuext_op(), 0, 0);
  long wrong = 0;
  volatile uint64_t* entries = entries_of(detach_l1);
  for (unsigned i = 0; i < kDetachStores; ++i) {
    // A data mapping kept: present, read-only, the data page (Xen may add flags of its own);
    // a table mapping refused: the entry as it was, empty.
    const uint64_t value = entries[round * kDetachStores + i];
    const bool data_mapping = (value & PageTableEntry::kPresent) && !(value & PageTableEntry::kWritable) &&
                              ((value >> 12) & ((1ull << 40) - 1)) == data_mfn().value;
    wrong += i % 2 ? !data_mapping : value != 0;
  }
  race.tallies[3].count(wrong, 0, 0);
  store_release(detach_checked, round + 1);
}

void detach_race(SelfTest& test, unsigned vcpus) {
  if (vcpus < 2) return;
  detach_l1 = table_frame();
  store_release(detach_step, 0u);
  store_release(detach_checked, 0u);
  test.check("detach-race: pin a zeroed L1 no address space links", mmuext(MMUEXT_PIN_L1_TABLE, detach_l1.value), 0);
  test.check("detach-race: both vCPUs ran their rounds", run_race(2, kDetachRounds, {detach_storer, detach_reattacher}),
             1);
  report(test, 0, "  vCPU 0's stores of read-only data mappings land");
  report(test, 1,
         detaches ? "  its stores of a writable mapping of the table fault, or land detached"
                  : "  its stores of a writable mapping of the table fault");
  report(test, 2, "  vCPU 1's MMU hypercalls meanwhile");
  report(test, 3, "  after vCPU 1's last hypercall: data mappings kept, table mappings refused");
  test.check("detach-race: unpin", mmuext(MMUEXT_UNPIN_TABLE, detach_l1.value), 0);
  release(detach_l1);
  audit(test);
}

// ---- 6. evtchn-race ---------------------------------------------------------------------

constexpr unsigned kBindRounds = 150;
constexpr unsigned kFloodRounds = 400;
uint32_t raced_port;   // the port bound last (0: none)
uint32_t bound_round;  // the binder's rounds that bound one

// vCPU 1: bind an IPI port for itself, say which, close it.
void bind_closer(unsigned) {
  evtchn_port_t port = 0;
  const long rc = evtchn::bind_ipi(1, port);
  race.tallies[1].count(rc, 0, 0);
  if (rc != 0) return;
  store_release(raced_port, uint32_t(port));
  __atomic_fetch_add(&bound_round, 1u, __ATOMIC_SEQ_CST);
  for (unsigned spin = 0; spin < 20; ++spin) __builtin_ia32_pause();
  race.tallies[3].count(evtchn::close(port), 0, 0);
}
// vCPU 0 (role 0) and vCPU 2 (role 2): send to the port bound last: done while it is bound
// (an IPI port), -EINVAL once closed (ECS_FREE).
void wait_bound(unsigned round) {
  for (unsigned tries = 0; load_acquire(bound_round) <= round && tries < 100'000; ++tries) yield();
}
void bind_sender(unsigned round) {
  wait_bound(round);
  const uint32_t port = load_acquire(raced_port);
  if (port) race.tallies[0].count(evtchn::send(port), 0, -XEN_EINVAL);
}
void bind_sender_2(unsigned round) {
  wait_bound(round);
  const uint32_t port = load_acquire(raced_port);
  if (port) race.tallies[2].count(evtchn::send(port), 0, -XEN_EINVAL);
}

// The flood: every vCPU but the target sends to the target's IPI port without pause; the
// target counts on (its events masked but in its blocks) and yields, IPIs pending meanwhile.
unsigned flood_target;
uint64_t target_work;
void flood_send(unsigned) {
  for (unsigned k = 0; k < 4; ++k)
    race.tallies[current_vcpu_id()].count(evtchn::send(smp::ipi_port(flood_target)), 0, 0);
}
void flood_work(unsigned) {
  ++target_work;
  if (target_work % 16 == 0) yield();
}

void evtchn_race(SelfTest& test, unsigned vcpus) {
  store_release(raced_port, 0u);
  store_release(bound_round, 0u);
  const Role third = vcpus > 2 ? bind_sender_2 : bind_sender;
  test.check("evtchn-race: every vCPU ran its rounds", run_race(vcpus, kBindRounds, {bind_sender, bind_closer, third}),
             1);
  report(test, 0, "  EVTCHNOP_send to the raced port: done, or -EINVAL once closed");
  report(test, 1, "  EVTCHNOP_bind_ipi: done");
  report(test, 3, "  EVTCHNOP_close: done");
  if (vcpus > 2) report(test, 2, "  a second sender: done or -EINVAL");

  flood_target = 1;
  target_work = 0;
  const uint64_t before = smp::ipis_taken(1);
  // Roles: vCPU 1 works, the others send.
  const bool ran = vcpus == 2 ? run_race(vcpus, kFloodRounds, {flood_send, flood_work})
                              : run_race(vcpus, kFloodRounds, {flood_send, flood_work, flood_send, flood_send});
  test.check("IPI flood: every vCPU ran its rounds", ran, 1);
  bool sends_ok = true;
  for (unsigned r = 0; r < vcpus && r < 4; ++r)
    if (r != 1) sends_ok = sends_ok && race.tallies[r].wrong == 0 && (r >= vcpus || race.tallies[r].main > 0);
  test.check("  every EVTCHNOP_send to the target's IPI port done", sends_ok, true);
  test.check("  the target did its work", long(target_work), long(kFloodRounds));
  test.check("  and took IPIs on itself",
             smp::block_until([&] { return smp::ipis_taken(1) > before; }, smp::now_ns() + 2'000'000'000), true);
  long answer = -1;
  test.check("  it still runs work handed to it",
             smp::run_on(
                 1, [](uint64_t) { return long(current_vcpu_id()); }, 0, answer, 2'000'000'000) &&
                 answer == 1,
             true);
}
// ---- 5. vcpu-race -----------------------------------------------------------------------

constexpr unsigned kVcpuRounds = 100;
constexpr unsigned kTarget = 3;        // the vCPU taken down and up (it plays a role of its own too)
vcpu_guest_context vcpu_race_context;  // a context for VCPUOP_initialise (5 KiB: off the stack)

long vcpu_op(int command, unsigned vcpu, void* argument = nullptr) {
  return arch::hypercall(__HYPERVISOR_vcpu_op, uint64_t(uint32_t(command)), vcpu, arch::arg(argument));
}

// vCPU 0: looks at the target (runstate: always answered) and sends to its IPI port (pending
// while it is down).
void vcpu_race_watcher(unsigned) {
  vcpu_runstate_info info{};
  race.tallies[0].count(vcpu_op(VCPUOP_get_runstate_info, kTarget, &info), 0, 0);
  race.tallies[4].count(evtchn::send(smp::ipi_port(kTarget)), 0, 0);
}
// vCPU 1: takes the target down and brings it up, in turn: Xen answers 0 to both, whatever
// state the target is in (a down of a vCPU that is down, an up of one up).
void vcpu_race_downer(unsigned round) {
  race.tallies[1].count(vcpu_op(round & 1 ? VCPUOP_up : VCPUOP_down, kTarget), 0, 0);
}
// vCPU 2: initialises the target (running, down or on its way): -EEXIST, it has a context; the
// same for a context with a non-canonical entry point and a bad CR3 (the vCPU's state is
// looked at first); is_up 0 or 1.
void vcpu_race_initialiser(unsigned round) {
  smp::secondary_context(kTarget, vcpu_race_context);
  if (round % 3 == 1) vcpu_race_context.user_regs.rip = 0x0000800000000000ull;
  if (round % 3 == 2) vcpu_race_context.ctrlreg[3] = 0x1000;
  race.tallies[2].count(vcpu_op(VCPUOP_initialise, kTarget, &vcpu_race_context), -XEN_EEXIST, -XEN_EEXIST);
  race.tallies[5].count(vcpu_op(VCPUOP_is_up, kTarget), 1, 0);
}
// The target: takes itself down every other round (back once vCPU 1 or vCPU 0 brings it up).
void vcpu_race_target(unsigned round) {
  if (round & 1) race.tallies[3].count(vcpu_op(VCPUOP_down, kTarget), 0, 0);
}
void bring_target_up() { vcpu_op(VCPUOP_up, kTarget); }

void vcpu_race(SelfTest& test, unsigned vcpus) {
  if (vcpus <= kTarget) {
    test.note("vcpu-race needs four vCPUs; skipped with", long(vcpus));
    return;
  }
  test.check("vcpu-race: every vCPU ran its rounds",
             run_race(4, kVcpuRounds, {vcpu_race_watcher, vcpu_race_downer, vcpu_race_initialiser, vcpu_race_target},
                      bring_target_up),
             1);
  report(test, 0, "  VCPUOP_get_runstate_info of the raced vCPU: 0");
  report(test, 4, "  EVTCHNOP_send to its IPI port: 0 (pending while it is down)");
  report(test, 1, "  VCPUOP_down / VCPUOP_up of it from another vCPU: 0");
  report(test, 2, "  VCPUOP_initialise of it (good, non-canonical, bad CR3): -EEXIST");
  report(test, 5, "  VCPUOP_is_up of it: 1 or 0");
  report(test, 3, "  its own VCPUOP_down: 0 once brought up again");
  test.check("  it is up at the end", vcpu_op(VCPUOP_is_up, kTarget), 1);
  long answer = -1;
  test.check("  and runs work handed to it",
             smp::run_on(
                 kTarget, [](uint64_t) { return long(current_vcpu_id()); }, 0, answer, 2'000'000'000) &&
                 answer == long(kTarget),
             true);
}

// ---- 7. long-hypercall ------------------------------------------------------------------

constexpr unsigned kBatch = 8192;  // mmu_update requests in one hypercall
constexpr unsigned kBatches = 4;
mmu_update_t batch[kBatch];
Mfn batch_l1;
uint32_t in_batch;         // 1 while vCPU 1 is inside its batch
uint64_t calls_meanwhile;  // hypercalls the others completed while it was

// vCPU 1: one long mmu_update over a pinned L1's entries.
void long_batcher(unsigned round) {
  unsigned done = 0;
  store_release(in_batch, 1u);
  const long rc = arch::hypercall(__HYPERVISOR_mmu_update, arch::arg(batch), kBatch, arch::arg(&done), DOMID_SELF);
  store_release(in_batch, 0u);
  race.tallies[1].count(rc == 0 && done == kBatch ? 0 : (rc ? rc : long(done)), 0, 0);
  (void)round;
}
// The others: short hypercalls (an event to vCPU 0's own port, a yield) as long as the batch runs.
void short_caller(unsigned) {
  for (unsigned k = 0; k < 64; ++k) {
    race.tallies[current_vcpu_id() == 0 ? 0 : 2].count(xen::sched_op(SCHEDOP_yield, nullptr), 0, 0);
    if (load_acquire(in_batch)) __atomic_fetch_add(&calls_meanwhile, 1, __ATOMIC_SEQ_CST);
  }
}

void long_hypercall_race(SelfTest& test, unsigned vcpus) {
  batch_l1 = table_frame();
  test.check("long-hypercall: pin an L1 to update", pv::ops.raw_mmuext(MMUEXT_PIN_L1_TABLE, batch_l1.value), 0);
  for (unsigned i = 0; i < kBatch; ++i) {
    batch[i].ptr = batch_l1.machine_address() + 8 * (i % 512);
    batch[i].val = i & 512 ? 0 : entry(data_mfn(), kReadOnly);
  }
  calls_meanwhile = 0;
  const bool ran = vcpus == 2 ? run_race(2, kBatches, {short_caller, long_batcher})
                              : run_race(vcpus, kBatches, {short_caller, long_batcher, short_caller, short_caller});
  test.check("long-hypercall: every vCPU ran its rounds", ran, 1);
  report(test, 1, "  each batch of 8192 mmu_update requests done whole");
  report(test, 0, "  vCPU 0's short hypercalls meanwhile");
  report(test, 2, "  the others' short hypercalls meanwhile");
  test.note("  short hypercalls completed while a batch ran", long(calls_meanwhile));
  test.check("  unpin the L1", pv::ops.raw_mmuext(MMUEXT_UNPIN_TABLE, batch_l1.value), 0);
  release(batch_l1);
  audit(test);
}
}  // namespace

void selftest_hostile_smp(SelfTest& test) {
  char flag[4];
  detaches = lib::cmdline_value(boot_info.cmdline, "hostile_smp_detaches", flag, sizeof(flag));
  const unsigned vcpus = smp::vcpu_count();
  test.note("vCPUs", long(vcpus));
  if (vcpus < 2) {
    test.check("hostile-smp needs a domain with at least two vCPUs", long(vcpus) >= 2, true);
    return;
  }
  test.check("vCPU 0's IPI port bound", smp::init(), 0);
  for (unsigned id = 1; id < vcpus; ++id) test.check("a vCPU brought up", smp::start(id).ok(), true);
  pin_race(test, vcpus);
  free_race(test, vcpus);
  shared_l1_race(test, vcpus);
  stale_tlb_race(test, vcpus);
  detach_race(test, vcpus);
  evtchn_race(test, vcpus);
  vcpu_race(test, vcpus);
  long_hypercall_race(test, vcpus);
}

}  // namespace kernel
