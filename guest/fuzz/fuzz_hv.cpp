// The hv_frames class (fuzz/generator/fuzz_generate_hv.cpp): the frames the hypervisor writes for us,
// retyped between its writes. Each frame has a read-only view in the window (the kernel reads
// it there whatever its own mapping does) and a snapshot page. A frame that took a table or
// descriptor type (a pin, a GDT, a link from a scratch table succeeded) is snapshotted then and
// compared after every step that makes the hypervisor write (a notification, a yield, a block,
// an event send) and at the end: a correct hypervisor holds a writable type on what it writes
// (the retyping is refused) or writes through our mappings (which no longer reach the frame),
// so a change is the hypervisor writing into a page table of ours: a violation. Afterwards
// everything is put back: the GDT, the scratch entries, the pins, the kernel's own mappings,
// the console drained again.
#include <stdint.h>
#include <xen/xen.h>
#include <xen/event_channel.h>
#include <xen/io/console.h>
#include <xen/vcpu.h>

#include "arch/xen.h"
#include "kernel/console/console.h"
#include "fuzz/fuzz_internal.h"
#include "fuzz/fuzz_mailbox.h"
#include "kernel/memory/page_allocator.h"
#include "pv-kernel-patches/shared_info.h"
#include "fuzz/generator/fuzz_entries.h"
#include "pv-kernel-patches/pv_ops.h"

extern "C" char hypercall_page[];

namespace kernel::fuzz {
namespace {

using namespace lib::fuzz;
using Kind = HvStep::Kind;

constexpr uint64_t kReadOnly = kPresentBit | kAccessedBit;
// Per frame: a read-only view and a snapshot page (window pages nothing else uses).
constexpr uint64_t kViewVa = kWindowVa + 0x20000, kSnapshotVa = kWindowVa + 0x28000;
// Bits the CPU or a correct hypervisor may set in a typed frame: accessed and dirty of a page
// table entry, the accessed bit of a descriptor.
constexpr uint64_t kMayChange = kAccessedBit | kDirtyBit | (1ull << 40);

volatile uint64_t* view(unsigned frame) { return reinterpret_cast<volatile uint64_t*>(kViewVa + frame * 4096ull); }
uint64_t* snapshot(unsigned frame) { return reinterpret_cast<uint64_t*>(kSnapshotVa + frame * 4096ull); }

volatile uint64_t* slot_va_of(const HvFrame& frame) {
  pv::PageTableSlot slot;
  if (!walk(kernel_l4(), frame.va, Level::l1, slot)) return nullptr;
  return slot.kernel_va;
}

// What one operation changed, to put back.
struct HvRun {
  uint32_t unmapped = 0, typed = 0, pinned = 0, linked = 0;
  uint64_t own_entry[kMaxHvFrames] = {};
  struct Written {
    uint8_t table;
    uint16_t slot;
    uint64_t before;
  } written[kMaxHvSteps] = {};
  unsigned written_count = 0;
  bool console_touched = false;
  // Changes found, printed once everything is back (the console may be the frame changed).
  struct Change {
    uint8_t frame;
    uint16_t word;
    uint64_t then, now;
    const char* when;
  } changes[4] = {};
  unsigned change_count = 0;
};

long mmuext(unsigned cmd, uint64_t mfn) { return pv::ops.raw_mmuext(cmd, mfn); }

long send(uint32_t port) {
  evtchn_send_t request{port};
  return xen::event_channel_op(EVTCHNOP_send, &request);
}

// Whether the frame holds a page-table or descriptor type now: a writable mapping of it is
// refused exactly then. The probe uses the frame's own view slot and puts it back read-only.
// (An mmu_update into a scratch table that is no validated table at the moment is a plain
// write, so a "link" that answered 0 may have typed nothing.)
bool holds_special_type(unsigned frame, uint64_t mfn) {
  const uint64_t va = kViewVa + frame * 4096ull;
  pv::PageTableSlot slot;
  if (!walk(kernel_l4(), va, Level::l1, slot)) return true;
  if (pv::ops.raw_mmu_update(slot.machine_address, (mfn << 12) | kReadOnly | kWritableBit | kDirtyBit) != 0)
    return true;
  pv::ops.raw_mmu_update(slot.machine_address, (mfn << 12) | kReadOnly);
  pv::ops.invalidate_page(va);
  return false;
}

void take_snapshot(unsigned frame) {
  ++campaign.stats.hv_typed;
  for (unsigned i = 0; i < 512; ++i) snapshot(frame)[i] = view(frame)[i];
}

// The typed frames against their snapshots: a change is recorded (reported after the operation)
// and counted; the snapshot then follows, so one write is one violation.
void compare(Campaign& c, HvRun& run, const char* when) {
  for (unsigned f = 0; f < c.pool.hv_frame_count; ++f) {
    if (!((run.typed >> f) & 1)) continue;
    ++c.stats.hv_compared;
    for (unsigned i = 0; i < 512; ++i) {
      uint64_t now = view(f)[i], then = snapshot(f)[i];
      if (((now ^ then) & ~kMayChange) == 0) continue;
      take_snapshot(f);
      // Typing ends only by the fuzzer's own unpin or unlink, each compared before: a frame not
      // typed now was not typed since the last comparison, and the hypervisor may write it.
      if (!holds_special_type(f, c.pool.hv_frames[f].mfn)) {
        run.typed &= ~(1u << f);
        break;
      }
      ++c.stats.oracle_violations;
      if (run.change_count < 4) run.changes[run.change_count++] = {uint8_t(f), uint16_t(i), then, now, when};
      break;
    }
  }
}

void report(Campaign& c, const HvRun& run) {
  for (unsigned i = 0; i < run.change_count; ++i) {
    const auto& change = run.changes[i];
    const HvFrame& frame = c.pool.hv_frames[change.frame];
    print(
        "fuzz: op %lu saw the hypervisor write into our %s (mfn %lx) while it was typed as a table (%s): word %u "
        "%lx -> %lx\n",
        fuzz_mailbox.op, hv_frame_name(frame.kind), frame.mfn, change.when, change.word, change.then, change.now);
  }
}

// The console ring's index in the pool's hv_frames (hv_frame_count: none).
unsigned console_index(const Pool& pool) {
  for (unsigned f = 0; f < pool.hv_frame_count; ++f)
    if (pool.hv_frames[f].kind == HvFrameKind::console_ring) return f;
  return pool.hv_frame_count;
}

bool own_mapping_present(Campaign& c, unsigned frame) {
  volatile uint64_t* slot = slot_va_of(c.pool.hv_frames[frame]);
  return slot && (*slot & kPresentBit) && ((*slot & kAddressBits) >> 12) == c.pool.hv_frames[frame].mfn &&
         (*slot & kWritableBit);
}

// The console drained (its text consumed), the text cleared and our copy of the consumer index
// changed: the ring then reads as a table of not-present entries, and the hypervisor's next
// store of its index is a change we see.
void prepare(Campaign& c, unsigned frame, HvRun& run) {
  const HvFrame& hv = c.pool.hv_frames[frame];
  if (!own_mapping_present(c, frame)) return;
  if (hv.kind == HvFrameKind::console_ring) {
    send(c.pool.console_port);
    auto* ring = reinterpret_cast<volatile xencons_interface*>(hv.va);
    if (ring->out_cons != ring->out_prod) return;  // not drained: its text is still wanted
    for (unsigned i = 0; i < sizeof(ring->in); ++i) ring->in[i] = 0;
    for (unsigned i = 0; i < sizeof(ring->out); ++i) ring->out[i] = 0;
    ring->out_cons = (ring->out_cons ^ 2) & ~1u;
    run.console_touched = true;
    return;
  }
  auto* words = reinterpret_cast<volatile uint64_t*>(hv.va);
  for (unsigned i = 0; i < 512; ++i) words[i] = 0;
}

// Every present entry of the scratch tables naming `mfn` given change(entry) (the tree is the
// fuzzer's: rebuild restores it).
template <typename Change>
void rewrite_scratch_entries(Campaign& c, uint64_t mfn, Change change) {
  const Pool& pool = c.pool;
  for (unsigned t = 0; t < pool.table_count; ++t) {
    auto* entries = reinterpret_cast<volatile uint64_t*>(readable_va(c, pool.table_mfn[t]));
    for (unsigned k = 0; entries && k < 512; ++k) {
      uint64_t entry = entries[k], ma = pool.table_mfn[t] * 4096 + k * 8ull;
      if (!(entry & kPresentBit) || ((entry & kAddressBits) >> 12) != mfn || !is_scratch_table_slot(pool, ma)) continue;
      if (change(entry) != entry) pv::ops.raw_mmu_update(ma, change(entry));
    }
  }
}

void unmap_own(Campaign& c, unsigned frame, HvRun& run) {
  const HvFrame& hv = c.pool.hv_frames[frame];
  // A scratch frame's writable mappings in the fuzzed tree made read-only too: with its own
  // mapping gone, nothing then refuses it a type.
  if (hv.scratch) rewrite_scratch_entries(c, hv.mfn, [](uint64_t entry) { return entry & ~kWritableBit; });
  volatile uint64_t* slot = slot_va_of(hv);
  if (!slot || ((run.unmapped >> frame) & 1) || !(*slot & kPresentBit)) return;
  run.own_entry[frame] = *slot;
  if (pv::ops.raw_mmu_update(hv.slot_ma, 0) == 0) run.unmapped |= 1u << frame;
  pv::ops.invalidate_page(hv.va);
}

bool remap_own(Campaign& c, unsigned frame, HvRun& run) {
  if (!((run.unmapped >> frame) & 1)) return true;
  const HvFrame& hv = c.pool.hv_frames[frame];
  long rc = pv::ops.raw_mmu_update(hv.slot_ma, run.own_entry[frame]);
  pv::ops.invalidate_page(hv.va);
  if (rc != 0) return false;
  run.unmapped &= ~(1u << frame);
  run.typed &= ~(1u << frame);  // mapped writable again: it is no table
  return true;
}

long set_gdt_to(uint64_t mfn) {
  unsigned long frames[1] = {mfn};
  return arch::hypercall(__HYPERVISOR_set_gdt, reinterpret_cast<uint64_t>(frames), 512);
}

long register_area(const HvFrame& hv) {
  if (hv.kind == HvFrameKind::runstate) {
    vcpu_register_runstate_memory_area_t area{};
    area.addr.v = reinterpret_cast<vcpu_runstate_info_t*>(hv.va);
    return xen::vcpu_op(VCPUOP_register_runstate_memory_area, 0, &area);
  }
  vcpu_register_time_memory_area_t area{};
  area.addr.v = reinterpret_cast<vcpu_time_info_t*>(hv.va);
  return xen::vcpu_op(VCPUOP_register_vcpu_time_memory_area, 0, &area);
}

void write_entry(Campaign& c, const HvStep& step, HvRun& run) {
  const Pool& pool = c.pool;
  uint64_t table_va = readable_va(c, pool.table_mfn[step.table]);
  uint64_t before = table_va ? reinterpret_cast<volatile uint64_t*>(table_va)[step.slot] : 0;
  uint64_t ma = pool.table_mfn[step.table] * 4096 + step.slot * 8ull;
  long rc = pv::ops.raw_mmu_update(ma, step.value);
  if (rc != 0 || step.value == 0) return;
  if (run.written_count < kMaxHvSteps) run.written[run.written_count++] = {step.table, step.slot, before};
  if (step.kind == Kind::link && !((run.typed >> step.frame) & 1)) {
    run.typed |= 1u << step.frame;
    run.linked |= 1u << step.frame;
    take_snapshot(step.frame);
  }
}

void step(Campaign& c, const HvStep& s, HvRun& run) {
  const HvFrame& hv = c.pool.hv_frames[s.frame];
  const uint32_t bit = 1u << s.frame;
  switch (s.kind) {
    case Kind::prepare: prepare(c, s.frame, run); break;
    case Kind::unmap_own: unmap_own(c, s.frame, run); break;
    case Kind::remap_own: remap_own(c, s.frame, run); break;
    case Kind::pin:
      // A validation writes the frame itself (an L4 gets the hypervisor's slots 256-271, as in
      // Xen): what came before is compared first, and the snapshot taken after the pin.
      compare(c, run, "before a pin");
      if (mmuext(MMUEXT_PIN_L1_TABLE + s.level - 1, hv.mfn) == 0) {
        run.pinned |= bit;
        take_snapshot(s.frame);
        run.typed |= bit;
      }
      break;
    case Kind::unpin:
      compare(c, run, "before an unpin");
      if (mmuext(MMUEXT_UNPIN_TABLE, hv.mfn) == 0) {
        run.pinned &= ~bit;
        if (!(run.linked & bit)) run.typed &= ~bit;
      }
      break;
    case Kind::set_gdt:
      compare(c, run, "before a set_gdt");
      if (set_gdt_to(hv.mfn) == 0) {
        take_snapshot(s.frame);
        run.typed |= bit;
      }
      break;
    case Kind::unmap_fuzz:
      compare(c, run, "before an unlink");
      write_entry(c, s, run);
      break;
    case Kind::map_fuzz:
    case Kind::link: write_entry(c, s, run); break;
    case Kind::register_area: register_area(hv); break;
    case Kind::notify:
      send(c.pool.console_port);
      compare(c, run, "after a console notification");
      break;
    case Kind::yield:
      xen::sched_op(SCHEDOP_yield, nullptr);
      compare(c, run, "after a yield");
      break;
    case Kind::block:
      xen::sched_op(SCHEDOP_block, nullptr);
      pv::ops.disable_events();
      compare(c, run, "after a block");
      break;
    case Kind::send:
      send(s.port);
      compare(c, run, "after an event send");
      break;
    case Kind::count: break;
  }
}

// Whatever still gives a frame a type: the scratch entries naming it cleared, its pin dropped.
void untype(Campaign& c, unsigned frame) {
  uint64_t mfn = c.pool.hv_frames[frame].mfn;
  rewrite_scratch_entries(c, mfn, [](uint64_t) { return uint64_t(0); });
  for (unsigned i = 0; i < 3; ++i) mmuext(MMUEXT_UNPIN_TABLE, mfn);
}

void put_back(Campaign& c, const Op& op, HvRun& run) {
  compare(c, run, "at the end");
  if (op.restore & kRestoreGdt) restore(c, kRestoreGdt);
  for (unsigned i = run.written_count; i-- > 0;) {
    const auto& w = run.written[i];
    uint64_t ma = c.pool.table_mfn[w.table] * 4096 + w.slot * 8ull;
    if (pv::ops.raw_mmu_update(ma, w.before) != 0) pv::ops.raw_mmu_update(ma, 0);
  }
  for (unsigned f = 0; f < c.pool.hv_frame_count; ++f)
    if ((run.pinned >> f) & 1) mmuext(MMUEXT_UNPIN_TABLE, c.pool.hv_frames[f].mfn);
  settle();
  for (unsigned f = 0; f < c.pool.hv_frame_count; ++f) {
    if (remap_own(c, f, run)) continue;
    untype(c, f);  // typed by what an earlier step left: undo all of it
    settle();
    if (remap_own(c, f, run)) continue;
    ++c.stats.oracle_violations;
    // The console may be the frame: say it on the hypervisor's console.
    xen::console_write("fuzz: the kernel's mapping of a frame the hypervisor writes cannot be restored\n", 79);
  }
  unsigned console = console_index(c.pool);
  if (run.console_touched && console < c.pool.hv_frame_count && !((run.unmapped >> console) & 1)) {
    auto* ring = reinterpret_cast<volatile xencons_interface*>(c.pool.hv_frames[console].va);
    ring->out_cons = ring->out_prod;  // the hypervisor writes its own index back on the notification
    send(c.pool.console_port);
  }
}

void add_frame(Campaign& c, HvFrameKind kind, uint64_t mfn, uint64_t va, bool kernel_needs, bool scratch) {
  Pool& pool = c.pool;
  if (pool.hv_frame_count >= kMaxHvFrames) return;
  HvFrame frame;
  frame.kind = kind;
  frame.mfn = mfn;
  frame.va = va;
  frame.kernel_needs = kernel_needs;
  frame.read_only = is_read_only_frame(pool, mfn);
  frame.scratch = scratch;
  pv::PageTableSlot slot;
  if (!walk(kernel_l4(), va, Level::l1, slot)) return;
  frame.slot_ma = slot.machine_address;
  unsigned index = pool.hv_frame_count++;
  pool.hv_frames[index] = frame;
  map_window_frame(kViewVa + index * 4096ull, mfn, kReadOnly);
  map_window_page(kSnapshotVa + index * 4096ull, kReadOnly | kWritableBit | kDirtyBit);
}

}  // namespace

// Only the protected event ports known at setup are the kernel's own; the console's is one.
void setup_hv_frames(Campaign& c) {
  Pool& pool = c.pool;
  if (xencons_interface* ring = console_ring()) {
    add_frame(c, HvFrameKind::console_ring, boot_info.start_info->console.domU.mfn, reinterpret_cast<uint64_t>(ring),
              false, false);
    pool.console_port = console_port();
  }
  add_frame(c, HvFrameKind::shared_info, c.shared_info_mfn, reinterpret_cast<uint64_t>(shared_info()), false, false);
  // Two scratch data frames are the vCPU areas' (registered at their direct-map addresses).
  add_frame(c, HvFrameKind::runstate, pool.data_mfn[0], pool.data_va[0], false, true);
  add_frame(c, HvFrameKind::time_area, pool.data_mfn[1], pool.data_va[1], false, true);
  add_frame(c, HvFrameKind::hypercall_page, va_to_mfn(reinterpret_cast<uint64_t>(hypercall_page)).value,
            reinterpret_cast<uint64_t>(hypercall_page), true, false);
  // vcpu_info moved into a frame of its own (VCPUOP_register_vcpu_info; the kernel follows it):
  // the hypervisor writes it at every event and time update; the kernel cannot spare its mapping.
  if (!registered_vcpu_info) {
    Pfn pfn = allocate_zeroed_frame();
    vcpu_register_vcpu_info_t request{};
    request.mfn = pfn_to_mfn(pfn).value;
    if (xen::vcpu_op(VCPUOP_register_vcpu_info, 0, &request) == 0) {
      registered_vcpu_info = reinterpret_cast<vcpu_info_t*>(pfn_to_va(pfn));
      add_frame(c, HvFrameKind::vcpu_info, request.mfn, pfn_to_va(pfn), true, false);
    }
  }
  // The timer's port (VIRQ_TIMER), which the destroy class borrows during a destroy.
  for (uint32_t port = 1; port < 64 && !c.timer_port; ++port) {
    evtchn_status_t status{};
    status.dom = DOMID_SELF;
    status.port = port;
    if (xen::event_channel_op(EVTCHNOP_status, &status) == 0 && status.status == EVTCHNSTAT_virq &&
        status.u.virq == VIRQ_TIMER)
      c.timer_port = port;
  }
}

void teardown_hv_frames(Campaign& c) {
  for (unsigned f = 0; f < c.pool.hv_frame_count; ++f) {
    pv::PageTableSlot slot;
    if (walk(kernel_l4(), kViewVa + f * 4096ull, Level::l1, slot)) pv::ops.raw_mmu_update(slot.machine_address, 0);
    pv::ops.invalidate_page(kViewVa + f * 4096ull);
  }
  c.pool.hv_frame_count = 0;
}

void execute_hv_frames(Campaign& c, const Op& op) {
  HvRun run;
  for (unsigned i = 0; i < op.hv_count && i < kMaxHvSteps; ++i) step(c, op.hv[i], run);
  put_back(c, op, run);
  report(c, run);
}

}  // namespace kernel::fuzz
