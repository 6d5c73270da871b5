// Guest frames the hypervisor writes, turned against it (issue 28): a frame the hypervisor
// keeps storing into must never become a page table or a descriptor frame, or its stores
// would be taken for validated entries.
//
// selftest=hostile-console-ring (a domU with a console ring, start_info->console.domU): the
// guest waits for its backend to drain the ring, clears it so that it would pass any
// validation (and marks the cleared text consumed after the tries), maps it read-only, and
// tries to pin it as an L1, L2, L3 and L4 and to make it its GDT, notifying the console port
// after each try (the backend then stores the ring's out_cons). Every try is -EINVAL: the backend holds
// the frame as writable memory, as on Xen, where xenconsoled's writable mapping holds it. The
// ring is then mapped writable again and the console carries on. The backend is the hypervisor
// for a domU built at boot on ours, pvhvd for one `xl create` made (on ours and on Xen 4.17),
// which holds a lasting mapping of the ring in dom0 from the build on (tools/daemon/ring_page.h).
//
// selftest=hostile-store-ring (a domU with a xenstore ring, booted with xenbus=off so that the
// page stays as its builder made it: all zero, which passes every validation): the same tries
// on the xenstore ring, whose backend (pvhvd, xenstored's role) holds it mapped from INTRODUCE
// on. Every try is -EINVAL, and the page is still all zero after them (a pin as an L4 that
// worked would have had the hypervisor's slots written into it, over the ring's indexes).
//
// selftest=hostile-guest-frames (any domain): the frames of the areas a guest registers.
// A registered vcpu_info, which the hypervisor writes through its own mapping, cannot be
// pinned (-EINVAL) even once the guest's own mapping is read-only. The runstate and time
// areas, which it writes through the guest's virtual addresses, can be (a frame that validates
// as an L1 is pinned as on Xen): those writes then fault on the guest's read-only mapping and
// are dropped, and the table's entries stay as they were.
//
// The expected values are Xen 4.17's.
#include <stdint.h>
#include <xen/xen.h>
#include <xen/io/console.h>
#include <xen/vcpu.h>

#include "arch/hypercall.h"
#include "arch/xen.h"
#include "kernel/console/console.h"
#include "arch/event_channel_ops.h"
#include "kernel/memory/physical_memory.h"
#include "selftest/memory/memory_selftests.h"
#include "pv-kernel-patches/shared_info.h"
#include "kernel/events/time.h"
#include "xenbus/xenbus.h"

namespace kernel {
namespace {
constexpr uint64_t kReadOnly = PageTableEntry::kPresent | PageTableEntry::kAccessed;
constexpr uint64_t kWritable = kReadOnly | PageTableEntry::kWritable | PageTableEntry::kDirty;
constexpr long kEinval = -22;
constexpr unsigned kPinCommands[] = {MMUEXT_PIN_L1_TABLE, MMUEXT_PIN_L2_TABLE, MMUEXT_PIN_L3_TABLE,
                                     MMUEXT_PIN_L4_TABLE};
constexpr const char* kPinNames[] = {"pin as an L1", "pin as an L2", "pin as an L3", "pin as an L4"};
constexpr unsigned kLevels = 4;
constexpr uint64_t kDrainPatienceNs = 5'000'000'000;

struct FrameMapping {
  Mfn frame;
  pv::PageTableSlot slot;  // the L1 entry of the kernel's only mapping of the frame
};

FrameMapping mapping_of(uint64_t va) {
  FrameMapping mapping{va_to_mfn(va), {}};
  walk(kernel_l4(), va, Level::l1, mapping.slot);
  return mapping;
}
long map(const FrameMapping& mapping, uint64_t flags) {
  return pv::ops.raw_mmu_update(mapping.slot.machine_address, PageTableEntry::make(mapping.frame, flags).raw());
}
long set_gdt(const uint64_t* frames, uint64_t entries) {
  return arch::hypercall(__HYPERVISOR_set_gdt, reinterpret_cast<uint64_t>(frames), entries);
}
long vcpu_op(unsigned command, const void* argument) {
  return arch::hypercall(__HYPERVISOR_vcpu_op, command, 0, reinterpret_cast<uint64_t>(argument));
}

// What the ring test saw while the ring was read-only: nothing is printed then, since every
// line of a domU's output goes into that ring.
struct RingTries {
  long read_only = 0, pins[kLevels] = {}, gdt = 0, notifications[kLevels + 1] = {}, writable = 0;
};

// A try that should have been refused and was not is undone at once, before the backend can
// store into the frame as a table or a descriptor frame.
long try_pin(Mfn frame, unsigned command) {
  const long rc = pv::ops.raw_mmuext(command, frame.value);
  if (rc == 0) pv::ops.raw_mmuext(MMUEXT_UNPIN_TABLE, frame.value);
  return rc;
}
long try_gdt(Mfn frame) {
  const uint64_t frames[1] = {frame.value};
  const long rc = set_gdt(frames, 512);
  if (rc == 0) set_gdt(frames, 0);
  return rc;
}

// Zero text and input indexes and a zero out_cons leave one nonzero word, out_prod, in the
// high half of entry 385: not present as an entry, and the high word of a not-present
// descriptor while out_prod is below 32 KiB. The frame then passes every validation: only
// the backend's hold can refuse it.
void clear_console_ring(volatile xencons_interface* ring) {
  // What the guest wrote is drained first (a backend such as pvhvd drains on its own schedule),
  // so that the clearing loses no output.
  const uint64_t until = system_time_ns() + kDrainPatienceNs;
  while (ring->out_cons != ring->out_prod && system_time_ns() < until) xen::sched_op(SCHEDOP_yield, nullptr);
  for (auto& byte : ring->in) byte = 0;
  for (auto& byte : ring->out) byte = 0;
  ring->in_cons = 0;
  ring->in_prod = 0;
  ring->out_cons = 0;
}

RingTries try_ring(const FrameMapping& mapping, uint32_t port) {
  RingTries tries;
  tries.read_only = map(mapping, kReadOnly);
  for (unsigned i = 0; i < kLevels; ++i) {
    tries.pins[i] = try_pin(mapping.frame, kPinCommands[i]);
    tries.notifications[i] = evtchn::send(port);
  }
  tries.gdt = try_gdt(mapping.frame);
  tries.notifications[kLevels] = evtchn::send(port);
  tries.writable = map(mapping, kWritable);
  return tries;
}

// The registered areas of selftest=hostile-guest-frames, each in a page of its own.
alignas(4096) uint8_t vcpu_info_page[4096];
alignas(4096) uint8_t areas_page[4096];
// The runstate area and the time area one byte past an entry boundary: the low byte of every
// entry they cover is then a byte the hypervisor writes as zero (padding, or the top byte of
// a time in nanoseconds or of the TSC), so the page validates as an L1 whatever the times are.
constexpr unsigned kRunstateOffset = 1, kTimeOffset = 65;
constexpr unsigned kAreasEnd = 128;

void vcpu_info_frame(SelfTest& test) {
  const FrameMapping mapping = mapping_of(reinterpret_cast<uint64_t>(vcpu_info_page));
  // Masked while the frame is read-only: an event delivered then would write the mask.
  const bool events_were_enabled = pv::ops.events_enabled();
  pv::ops.disable_events();
  vcpu_register_vcpu_info request{};
  request.mfn = mapping.frame.value;
  request.offset = 64;
  const long registered = vcpu_op(VCPUOP_register_vcpu_info, &request);
  if (registered == 0) registered_vcpu_info = reinterpret_cast<vcpu_info_t*>(vcpu_info_page + 64);
  const long read_only = map(mapping, kReadOnly);
  const long pin = try_pin(mapping.frame, MMUEXT_PIN_L1_TABLE);
  const long gdt = try_gdt(mapping.frame);
  const long writable = map(mapping, kWritable);
  if (events_were_enabled) pv::ops.enable_events();
  test.check("register_vcpu_info works", registered, 0);
  test.check("  its frame mapped read-only", read_only, 0);
  test.check("  pin it as an L1 is -EINVAL (the hypervisor holds it writable)", pin, kEinval);
  test.check("  set_gdt of it is -EINVAL", gdt, kEinval);
  test.check("  mapped writable again", writable, 0);
}

bool areas_unchanged(const uint8_t* before) {
  for (unsigned i = 0; i < kAreasEnd; ++i)
    if (before[i] != reinterpret_cast<volatile uint8_t*>(areas_page)[i]) return false;
  return true;
}

void registered_areas(SelfTest& test) {
  const FrameMapping mapping = mapping_of(reinterpret_cast<uint64_t>(areas_page));
  vcpu_register_runstate_memory_area runstate{};
  runstate.addr.v = reinterpret_cast<vcpu_runstate_info*>(areas_page + kRunstateOffset);
  vcpu_register_time_memory_area_t time{};
  time.addr.v = reinterpret_cast<vcpu_time_info_t*>(areas_page + kTimeOffset);
  test.check("register_runstate_memory_area works", vcpu_op(VCPUOP_register_runstate_memory_area, &runstate), 0);
  test.check("register_vcpu_time_memory_area works", vcpu_op(VCPUOP_register_vcpu_time_memory_area, &time), 0);
  test.check("  their frame mapped read-only", map(mapping, kReadOnly), 0);
  uint8_t before[kAreasEnd];
  for (unsigned i = 0; i < kAreasEnd; ++i) before[i] = areas_page[i];
  // The areas are written through the guest's addresses: nothing holds the frame.
  test.check("  pin it as an L1 works", pv::ops.raw_mmuext(MMUEXT_PIN_L1_TABLE, mapping.frame.value), 0);
  for (unsigned i = 0; i < 4; ++i) xen::sched_op(SCHEDOP_yield, nullptr);
  test.check("  registering the runstate area again (written at once) works",
             vcpu_op(VCPUOP_register_runstate_memory_area, &runstate), 0);
  test.check("  registering the time area again (written at once) works",
             vcpu_op(VCPUOP_register_vcpu_time_memory_area, &time), 0);
  test.check("  and the table's entries are unchanged (the writes faulted)", areas_unchanged(before), true);
  test.check("  unpin it", pv::ops.raw_mmuext(MMUEXT_UNPIN_TABLE, mapping.frame.value), 0);
  test.check("  mapped writable again", map(mapping, kWritable), 0);
  runstate.addr.v = nullptr;
  time.addr.v = nullptr;
  test.check("  the runstate area unregistered", vcpu_op(VCPUOP_register_runstate_memory_area, &runstate), 0);
  test.check("  the time area unregistered", vcpu_op(VCPUOP_register_vcpu_time_memory_area, &time), 0);
}

void report_ring_tries(SelfTest& test, const RingTries& tries) {
  test.check("the ring mapped read-only", tries.read_only, 0);
  for (unsigned i = 0; i < kLevels; ++i) {
    test.check(kPinNames[i], tries.pins[i], kEinval);
    test.check("  and a notification", tries.notifications[i], 0);
  }
  test.check("set_gdt of the ring", tries.gdt, kEinval);
  test.check("  and a notification", tries.notifications[kLevels], 0);
  test.check("the ring mapped writable again", tries.writable, 0);
}

bool all_zero(const volatile uint8_t* page) {
  for (unsigned i = 0; i < 4096; ++i)
    if (page[i]) return false;
  return true;
}
}  // namespace

void selftest_hostile_console_ring(SelfTest& test) {
  auto* ring = reinterpret_cast<volatile xencons_interface*>(console_ring());
  test.check("the domain has a console ring (a domU built with one)", ring != nullptr, true);
  if (ring == nullptr) return;
  const FrameMapping mapping = mapping_of(reinterpret_cast<uint64_t>(console_ring()));
  clear_console_ring(ring);
  const RingTries tries = try_ring(mapping, console_port());
  // Nothing of the cleared text is left to drain (a backend that has not drained since would
  // take its zeros for output).
  ring->out_cons = ring->out_prod;
  report_ring_tries(test, tries);
}

void selftest_hostile_store_ring(SelfTest& test) {
  volatile xenstore_domain_interface* ring = xenbus_store_page();
  test.check("the domain has a xenstore ring (a domU built with one)", ring != nullptr, true);
  if (ring == nullptr) return;
  const auto* page = reinterpret_cast<const volatile uint8_t*>(ring);
  test.check("  all zero, as its builder made it (xenbus=off): it passes every validation", all_zero(page), true);
  const FrameMapping mapping = mapping_of(reinterpret_cast<uint64_t>(ring));
  report_ring_tries(test, try_ring(mapping, xenbus_store_port()));
  test.check("the page is still all zero (nothing validated it as a table)", all_zero(page), true);
}

void selftest_hostile_guest_frames(SelfTest& test) {
  vcpu_info_frame(test);
  registered_areas(test);
}
}  // namespace kernel
