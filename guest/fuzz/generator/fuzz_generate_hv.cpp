// Two classes of the generator (fuzz/generator/fuzz_generator.h) aimed at what the hypervisor does on a
// domain's behalf rather than at its answers:
//
//  - hv_frames: the frames the hypervisor writes for us (the console ring, shared_info, the
//    runstate and time areas, the hypercall page, vcpu_info) kept in the pool and retyped between its
//    writes: our own mapping of one removed, the frame pinned as a table, used as a GDT, mapped
//    or linked from the scratch tables, with the console notified, yields, blocks and event
//    sends in between (the writes). The executor snapshots a frame that took a table type and
//    checks the hypervisor never changed it.
//  - destroy (dom0): a small domain created, given memory, maybe held by a foreign mapping,
//    destroyed with calls for it racing the teardown's continuations (populate_physmap,
//    decrease_reservation, event channels, foreign mappings, pins) and after it, and its id
//    created again: the new domain must own nothing of the dead one.
#include "fuzz/generator/fuzz_generator.h"

namespace lib::fuzz::detail {

unsigned Generator::hv_frame_choice(unsigned primary) {
  return random_.percent(80) ? primary : unsigned(random_.below(pool_.hv_frame_count));
}

void Generator::hv_entry(HvStep& step, unsigned level) {
  const HvFrame& frame = pool_.hv_frames[step.frame];
  step.level = uint8_t(level);
  step.table = uint8_t(table_of_level(level));
  step.slot = uint16_t(table_slot_index(step.table, false));
  uint64_t flags = kPresentBit | kAccessedBit | (random_.coin() ? kUserBit : 0);
  if (level == 1 && frame.scratch && step.writable) flags |= kWritableBit | kDirtyBit;
  step.writable = (flags & kWritableBit) != 0;
  step.value = (frame.mfn << 12) | flags;
}

void Generator::hv_step(Op& op, unsigned primary, uint32_t& unmapped) {
  using Kind = HvStep::Kind;
  static const unsigned kWeights[unsigned(Kind::count)] = {2, 4, 4, 20, 6, 6, 8, 10, 4, 3, 10, 10, 6, 6};
  HvStep step;
  step.kind = Kind(random_.weighted(kWeights, unsigned(Kind::count)));
  step.frame = uint8_t(hv_frame_choice(primary));
  const HvFrame& frame = pool_.hv_frames[step.frame];
  // A frame mapped read-only only is never named where a type could be taken, nor in an entry
  // (OtherFrame::read_only): only the hypervisor's writes come near it.
  bool named = step.kind == Kind::pin || step.kind == Kind::unpin || step.kind == Kind::set_gdt ||
               step.kind == Kind::link || step.kind == Kind::map_fuzz;
  if (named && frame.read_only) step.kind = Kind::yield;
  if ((step.kind == Kind::unmap_own || step.kind == Kind::remap_own) && frame.kernel_needs) step.kind = Kind::yield;
  bool clearable = frame.kind == HvFrameKind::console_ring || frame.scratch;  // the others hold live state
  if (step.kind == Kind::prepare && !clearable) step.kind = Kind::yield;
  bool area = frame.kind == HvFrameKind::runstate || frame.kind == HvFrameKind::time_area;
  if (step.kind == Kind::register_area && !area) step.kind = Kind::yield;
  if (step.kind == Kind::notify && !pool_.console_port) step.kind = Kind::send;
  if (step.kind == Kind::send && !pool_.protected_port_count) step.kind = Kind::yield;
  bool shared_info_unmapped = false;
  for (unsigned i = 0; i < pool_.hv_frame_count; ++i)
    shared_info_unmapped |= ((unmapped >> i) & 1) && pool_.hv_frames[i].kind == HvFrameKind::shared_info;
  // The event upcall reads shared_info: nothing may unmask events while it is not mapped.
  if (step.kind == Kind::block && (shared_info_unmapped || op.arm_timer)) step.kind = Kind::yield;
  switch (step.kind) {
    case Kind::pin: step.level = uint8_t(random_.between(1, 4)); break;
    case Kind::map_fuzz:
      step.writable = random_.coin();
      hv_entry(step, 1);
      break;
    case Kind::link: hv_entry(step, unsigned(random_.between(2, 4))); break;
    case Kind::unmap_fuzz: {
      for (unsigned i = op.hv_count; i-- > 0;)  // the entry an earlier step wrote, else any
        if (op.hv[i].kind == Kind::map_fuzz || op.hv[i].kind == Kind::link) {
          step.table = op.hv[i].table;
          step.slot = op.hv[i].slot;
          step.value = 0;
          op.hv[op.hv_count++] = step;
          return;
        }
      step.kind = Kind::yield;
      break;
    }
    case Kind::set_gdt: op.restore |= kRestoreGdt; break;
    case Kind::register_area: op.restore |= kRestoreVcpuAreas; break;
    case Kind::unmap_own: unmapped |= 1u << step.frame; break;
    case Kind::remap_own: unmapped &= ~(1u << step.frame); break;
    case Kind::block: arm(op, random_.pick(kTimerDelays)); break;
    case Kind::send: step.port = pool_.protected_ports[random_.below(pool_.protected_port_count)]; break;
    default: break;
  }
  op.hv[op.hv_count++] = step;
}

void Generator::hv_frames(Op& op) {
  using Kind = HvStep::Kind;
  op.kind = OpKind::hv_frames;
  unsigned console = pool_.hv_frame_count;
  for (unsigned i = 0; i < pool_.hv_frame_count; ++i)
    if (pool_.hv_frames[i].kind == HvFrameKind::console_ring) console = i;
  unsigned primary =
      console < pool_.hv_frame_count && random_.percent(40) ? console : unsigned(random_.below(pool_.hv_frame_count));
  const HvFrame& frame = pool_.hv_frames[primary];
  uint32_t unmapped = 0;
  auto opening = [&](Kind kind) {
    HvStep step;
    step.kind = kind;
    step.frame = uint8_t(primary);
    op.hv[op.hv_count++] = step;
  };
  bool area = frame.kind == HvFrameKind::runstate || frame.kind == HvFrameKind::time_area;
  if (area && random_.percent(70)) {
    opening(Kind::register_area);
    op.restore |= kRestoreVcpuAreas;
  }
  if ((frame.kind == HvFrameKind::console_ring || frame.scratch) && random_.percent(70)) opening(Kind::prepare);
  if (!frame.kernel_needs && random_.percent(80)) {
    opening(Kind::unmap_own);
    unmapped |= 1u << primary;
  }
  unsigned steps = unsigned(random_.between(2, 7));
  for (unsigned i = 0; i < steps && op.hv_count + 1 < kMaxHvSteps; ++i) hv_step(op, primary, unmapped);
  if (random_.percent(70) && op.hv_count < kMaxHvSteps) {  // a last write by the hypervisor
    HvStep step;
    step.frame = uint8_t(primary);
    step.kind = pool_.console_port && random_.coin() ? Kind::notify : Kind::yield;
    op.hv[op.hv_count++] = step;
  }
}

DomStep Generator::race_step(uint8_t domain, bool racing) {
  using Kind = DomStep::Kind;
  static const Kind kKinds[] = {Kind::populate, Kind::decrease,    Kind::alloc_unbound,
                                Kind::bind,     Kind::foreign_map, Kind::pin};
  static const unsigned kWeights[] = {6, 3, 5, 3, 3, 2};
  DomStep step;
  step.kind = kKinds[random_.weighted(kWeights, sizeof(kWeights) / sizeof(kWeights[0]))];
  step.domain = domain;
  step.racing = racing;
  step.remote = random_.coin();
  step.order = random_.percent(20) ? 9 : 0;
  step.count = unsigned(random_.between(1, step.order ? 2 : 64));
  return step;
}

void Generator::destruction(Op& op) {
  using Kind = DomStep::Kind;
  op.kind = OpKind::destroy;
  uint8_t domain = uint8_t(random_.below(kDestroyDomainCount));
  auto add = [&](DomStep step) {
    if (op.dom_count < kMaxDomSteps) op.dom[op.dom_count++] = step;
  };
  auto simple = [&](Kind kind) {
    DomStep step;
    step.kind = kind;
    step.domain = domain;
    return step;
  };
  add(simple(Kind::create));
  if (random_.percent(90)) {
    DomStep max = simple(Kind::max_mem);
    max.count = unsigned(random_.between(64, 32768));  // KiB: up to 8192 frames
    add(max);
  }
  if (random_.percent(85)) {
    DomStep populate = simple(Kind::populate);
    populate.order = random_.percent(30) ? 9 : 0;
    populate.count = unsigned(random_.between(1, populate.order ? 8 : 512));
    add(populate);
  }
  for (unsigned i = 0, n = unsigned(random_.below(3)); i < n; ++i) add(race_step(domain, false));
  bool held = random_.percent(50);
  if (held) add(simple(Kind::hold));
  for (unsigned i = 0, n = unsigned(random_.below(6)); i < n; ++i) add(race_step(domain, true));
  DomStep destroy = simple(Kind::destroy);
  static const uint64_t kDelays[] = {0, 5000, 20000, 50000, 100000, 300000, 1000000};
  destroy.delay_ns = random_.pick(kDelays);
  add(destroy);
  for (unsigned i = 0, n = unsigned(random_.below(4)); i < n; ++i) add(race_step(domain, false));
  if (random_.percent(40)) add(simple(Kind::destroy));  // again: dying, dead or gone
  if (held && random_.percent(80)) add(simple(Kind::release));
  for (unsigned i = 0, n = unsigned(random_.below(2)); i < n; ++i) add(race_step(domain, false));
  if (random_.percent(75)) add(simple(Kind::recreate));
}

}  // namespace lib::fuzz::detail
