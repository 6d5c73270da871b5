// The generator's operations that are not hypercalls (fuzz/generator/fuzz_generator.h): direct stores
// into page tables (every store form, both PTE-write paths, alias sequences), loads and stores
// through the fuzzed range, hostile iret frames and RFLAGS, timers, port I/O, and trapping
// instructions.
#include "fuzz/generator/fuzz_generator.h"

namespace lib::fuzz::detail {

void Generator::store_step(Step& step) {
  static const unsigned kWeights[] = {55, 5, 5, 2, 2, 8, 8, 3, 3, 2, 2, 3, 1, 1};
  step.kind = Step::Kind::store;
  step.store = StoreKind(random_.weighted(kWeights, 14));
  step.path = random_.percent(30) ? StorePath::alias : StorePath::direct_map;
  step.alias = uint8_t(random_.below(16));
  if (!on(kAlias)) step.path = StorePath::direct_map;
  if (random_.percent(6)) {  // the kernel L4's fuzz slots (always through its direct map)
    step.table = kKernelL4Table;
    step.slot = uint16_t(kFuzzL4Slots[random_.below(kFuzzSlotCount)]);
    step.path = StorePath::direct_map;
    if (step.store == StoreKind::misaligned || step.store == StoreKind::rep_stos) step.store = StoreKind::mov64;
    step.value = entry_value(4);
    store_operand(step, 4);
    return;
  }
  // Mostly the L1s: their direct writes are what writable pagetables detach.
  unsigned table = random_.percent(65) ? table_of_level(1) : 0;
  if (table == 0) scratch_table(table);
  if (table < pool_.clone_count && random_.percent(70)) scratch_table(table);  // clones less often
  step.table = uint8_t(table);
  unsigned span = step.store == StoreKind::rep_stos ? unsigned(random_.between(1, 3)) : 1;
  step.slot = uint16_t(table_slot_index(table, step.store == StoreKind::misaligned, span));
  unsigned level = pool_.table_level[table];
  if (random_.percent(12)) level = unsigned(random_.between(1, 4));
  step.value = entry_value(level);
  step.operand = span;
  store_operand(step, level);
}

void Generator::store_operand(Step& step, unsigned level) {
  switch (step.store) {
    case StoreKind::cmpxchg: step.operand = random_.percent(60) ? kUseCurrent : entry_value(level); break;
    case StoreKind::or64: step.operand = random_.bits(64) & kSettableFlags; break;
    case StoreKind::and64: step.operand = ~(random_.bits(64) & kClearableFlags); break;
    case StoreKind::bts: step.operand = random_.pick(kSettableBitNumbers); break;
    case StoreKind::btr: step.operand = random_.pick(kClearableBitNumbers); break;
    case StoreKind::misaligned: step.operand = random_.between(1, 7); break;
    case StoreKind::rep_stos: break;  // the span, set by the caller
    default: step.operand = 0; break;
  }
}

uint64_t Generator::load_va() {
  switch (random_.below(10)) {
    case 0: return pool_.table_va[random_.below(pool_.table_count)] + random_.below(512) * 8;
    case 1: return on(kHypervisorPointers) ? hypervisor_va() : kHypervisorStart + random_.bits(20) * 8;
    case 2: return unreadable_va();
    case 3: return pool_.data_va[random_.below(pool_.data_count)] + random_.below(512) * 8;
    default: return fuzz_va() & ~7ull;
  }
}

void Generator::touch_steps(Op& op, unsigned count) {
  for (unsigned i = 0; i < count && op.step_count < kMaxSteps; ++i) {
    Step& step = op.steps[op.step_count++];
    step.va = load_va();
    if (random_.percent(40)) {
      step.kind = Step::Kind::touch_store;
      step.va = random_.percent(80) ? fuzz_va() & ~7ull
                                    : pool_.data_va[random_.below(pool_.data_count)] + random_.below(512) * 8;
      step.value = random_.coin() ? entry_value(1) : sanitize_entry(pool_, random_.next() & ~kPresentBit);
    } else {
      step.kind = Step::Kind::load;
    }
  }
}

void Generator::alias_sequence(Op& op) {
  unsigned table = table_of_level(1);
  uint8_t first = uint8_t(random_.below(16)), second = uint8_t(first + 1 + random_.below(15));
  auto add = [&](Step step) {
    if (op.step_count < kMaxSteps) op.steps[op.step_count++] = step;
  };
  Step store;
  store.kind = Step::Kind::store;
  store.table = uint8_t(table);
  store.slot = uint16_t(table_slot_index(table, false));
  store.value = entry_value(1);
  store.path = StorePath::alias;
  store.alias = first;
  add(store);
  if (random_.percent(60)) {
    Step holder = store;
    holder.path = StorePath::alias_holder;
    holder.value = entry_value(1);
    add(holder);
  }
  Step load;
  load.kind = Step::Kind::alias_load;
  load.table = uint8_t(table);
  load.alias = second;
  add(load);
  if (random_.percent(70)) add(Step{});  // settle
  Step again = store;
  again.alias = second;
  again.slot = uint16_t(table_slot_index(table, false));
  again.value = entry_value(1);
  add(again);
  if (random_.coin()) add(Step{});
}

void Generator::ptwrite(Op& op) {
  if (random_.percent(6)) {
    Step rebuild;
    rebuild.kind = Step::Kind::rebuild;
    op.steps[op.step_count++] = rebuild;
  }
  if (random_.percent(20) && on(kAlias)) {
    alias_sequence(op);
    return;
  }
  unsigned stores = unsigned(random_.between(1, 8));
  for (unsigned i = 0; i < stores && op.step_count < kMaxSteps; ++i) {
    store_step(op.steps[op.step_count++]);
    if (random_.percent(20)) touch_steps(op, 1);
  }
  if (random_.percent(30) && op.step_count < kMaxSteps) op.steps[op.step_count++].kind = Step::Kind::settle;
}

uint64_t Generator::hostile_rflags(bool allow_tf) {
  uint64_t flags = 0x2;
  if (random_.percent(15) && on(kNt)) flags |= kNtFlag;
  if (random_.percent(10) && on(kTf) && allow_tf) flags |= kTfFlag;
  if (random_.percent(15)) flags |= kAcFlag;
  if (random_.percent(15)) flags |= kDfFlag;
  if (random_.percent(5)) flags |= kRfFlag;
  if (random_.percent(8)) flags |= kIdFlag;
  if (random_.percent(8)) flags |= 0x3000;    // IOPL 3 (the hypervisor must not grant it)
  if (random_.percent(4)) flags |= 1u << 17;  // VM
  if (random_.percent(5))
    flags |=
        random_.next() & 0x3f7fd5 & ~kIfFlag & ~(on(kNt) ? 0ull : kNtFlag) & ~(allow_tf && on(kTf) ? 0ull : kTfFlag);
  return flags;
}

void Generator::iret(Op& op) {
  IretFrame& frame = op.iret;
  frame.rax = random_.next();
  frame.r11 = random_.next();
  frame.rcx = random_.next();
  frame.flags = random_.percent(75) ? 0 : (random_.percent(80) ? VGCF_in_syscall : random_.next());
  // The kernel's code selector with RPL 0..2: the RPL says which mode to return to, and 3
  // (FLAT_KERNEL_CS as the guest sees it) would mean user mode.
  static const uint64_t kCs[] = {kFlatKernelCs & ~3u, 0xe031, 0xe032};
  frame.cs = random_.pick(kCs);
  frame.ss = kFlatKernelSs;
  bool bad_selector = false;
  if (on(kIretSelectors) && random_.percent(30)) {
    // Not 0xe020..0xe023: FLAT_RING3_CS32 is a valid code segment, and landing in 32-bit
    // code with a 64-bit stack pointer the hypervisor cannot bounce to is a legitimate end
    // of the domain (Xen 4.17 crashes it), not a finding.
    static const uint64_t kBadCs[] = {0, 1, 2, 0xe008, 0xe010, 0xe018, 0xe028, 0xe02a, 0x10, 0xffff, 0xfff8};
    static const uint64_t kBadSs[] = {0, 1, 2, 0xe010, 0xe030, 0xe008, 0xe02a, 0x18, 0xfffc};
    if (random_.coin())
      frame.cs = random_.coin() ? random_.pick(kBadCs) : random_.next();
    else
      frame.ss = random_.coin() ? random_.pick(kBadSs) : random_.next();
    bad_selector = true;
  }
  if ((frame.cs & 3) == 3) frame.cs &= ~3ull;  // RPL 3 would switch to user mode
  // The hypervisor loads the low 16 bits: a random 64-bit value can still name FLAT_RING3_CS32.
  if (((frame.cs & 0xffff) | 3) == kFlatUserCs32) frame.cs = 0xe018;
  bool events = random_.percent(40);
  frame.rflags = hostile_rflags(true) | (events ? kIfFlag : 0);
  frame.rip = IretFrame::Rip::landing;
  frame.rsp = random_.percent(8) ? IretFrame::Rsp::misaligned : IretFrame::Rsp::landing_stack;
  if (on(kIretRip) && !bad_selector && random_.percent(8)) {
    static const IretFrame::Rip kRips[] = {IretFrame::Rip::non_canonical, IretFrame::Rip::unmapped,
                                           IretFrame::Rip::hypervisor};
    frame.rip = random_.pick(kRips);
  }
  // A bad stack is survivable only if nothing needs it: no event, no trap, no fault.
  bool quiet = !events && !(frame.rflags & kTfFlag) && frame.rip == IretFrame::Rip::landing && !bad_selector;
  if (on(kIretRsp) && quiet && random_.percent(10)) {
    static const IretFrame::Rsp kRsps[] = {IretFrame::Rsp::unmapped, IretFrame::Rsp::non_canonical,
                                           IretFrame::Rsp::hypervisor};
    frame.rsp = random_.pick(kRsps);
  }
  frame.number = __HYPERVISOR_iret;
  if (on(kRaxHigh) && random_.percent(8)) frame.number |= random_.between(1, 0xffffffffull) << 32;
}

void Generator::rflags(Op& op) {
  uint32_t restore = 0;
  op.rflags = hostile_rflags(true);
  switch (random_.below(6)) {
    case 0:
      op.call.number = __HYPERVISOR_xen_version;
      op.call.args[0] = XENVER_version;
      break;
    case 1: mmu_update(op.call); break;
    case 2: mmuext_op(op.call, restore); break;
    case 3: va_mapping(op.call); break;
    case 4:
      op.call.number = __HYPERVISOR_sched_op;
      op.call.args[0] = SCHEDOP_yield;
      break;
    default: any_call(op, op.call, restore, false); break;
  }
  op.restore |= restore;
  // The single-step trap after the call would go to whatever trap table the call installed.
  if (restore & (kRestoreTraps | kRestoreCallbacks | kRestoreNmi)) op.rflags &= ~kTfFlag;
}

void Generator::sched(Op& op) {
  op.restore |= kRestoreTimers;
  switch (random_.below(6)) {
    case 0:
      op.call.number = __HYPERVISOR_sched_op;
      op.call.args[0] = SCHEDOP_yield;
      break;
    case 1:
      op.call.number = __HYPERVISOR_sched_op;
      op.call.args[0] = SCHEDOP_block;
      arm(op, random_.pick(kTimerDelays));
      break;
    case 2: {
      op.call.number = __HYPERVISOR_set_timer_op;
      static const uint64_t kTimes[] = {0, 1, 1000, ~0ull, 0x8000000000000000ull};
      op.call.args[0] = random_.coin() ? random_.pick(kTimes) : random_.next();
      break;
    }
    case 3:
      sched_op_args(op.call, op);
      op.call.number = __HYPERVISOR_sched_op;
      break;
    default:
      op.call.number = __HYPERVISOR_vcpu_op;
      vcpu_op_args(op.call, op.restore);
      break;
  }
}

void Generator::ports(Op& op) {
  PortAccess& access = op.port;
  static const uint16_t kHypervisorPorts[] = {0x3f8, 0x3f9, 0x3fa, 0x3fb, 0x3fc, 0x3fd, 0x3ff, 0x20, 0x21, 0xa0, 0xa1,
                                              0x40,  0x41,  0x42,  0x43,  0x61,  0x70,  0x71,  0xf4, 0xf5, 0xf6, 0xf7};
  static const uint16_t kStraddling[] = {0x3f5, 0x3f6, 0x3f7, 0xf1, 0xf2, 0xf3, 0x1f, 0x1e,
                                         0x3e,  0x3f,  0x5e,  0x5f, 0x6e, 0x6f, 0x9e, 0x9f};
  static const uint16_t kOthers[] = {0x80, 0x2f8, 0x2fd, 0x2ff,  0xcf8,  0xcfc, 0x60,
                                     0x64, 0x92,  0xcf9, 0xffff, 0xfffe, 0x0};
  static const uint8_t kWidths[] = {1, 2, 4};
  access.width = random_.pick(kWidths);
  access.out = random_.coin();
  access.string = random_.percent(15);
  access.count = access.string ? random_.between(1, 8) : 1;
  access.value = uint32_t(random_.next());
  access.iopl = uint32_t(random_.percent(75) ? random_.between(1, 3) : 0);
  switch (random_.below(4)) {
    case 0: access.port = random_.pick(kHypervisorPorts); break;
    case 1: access.port = random_.pick(kStraddling); break;
    case 2: access.port = random_.pick(kOthers); break;
    default: access.port = uint16_t(random_.next()); break;
  }
  // dom0 owns the machine's other devices: it may only write where the hypervisor must
  // drop the write (whatever a write elsewhere does is dom0's own business, resets included).
  if (pool_.privileged && access.out && !dom0_may_write(access.port, access.width)) {
    access.port = random_.pick(kHypervisorPorts);
    if (!dom0_may_write(access.port, access.width)) access.width = 1;
  }
  op.restore |= kRestoreIopl;
}

bool Generator::dom0_may_write(uint16_t port, unsigned width) {
  for (unsigned i = 0; i < width; ++i)
    if (!hypervisor_owned_port(uint16_t(port + i))) return false;
  return true;
}

void Generator::insn(Op& op) {
  Insn& insn = op.insn;
  insn.kind = InsnKind(random_.below(unsigned(InsnKind::count)));
  insn.rax = random_.next();
  insn.rdx = random_.next();
  insn.rcx = random_.next();
  switch (insn.kind) {
    case InsnKind::int_n: {
      static const uint8_t kVectors[] = {0x80, 0x82, 0x81, 0x20, 0x21, 0x22, 0x2f, 0x30, 0xef,
                                         0xf0, 0xfe, 0xff, 2,    8,    18,   14,   13,   1};
      insn.vector = random_.coin() ? random_.pick(kVectors) : uint8_t(random_.next());
      break;
    }
    case InsnKind::rdmsr:
    case InsnKind::wrmsr: {
      static const uint64_t kMsrs[] = {0xc0000080, 0xc0000081, 0xc0000082, 0xc0000083, 0xc0000084,
                                       0xc0000100, 0xc0000101, 0xc0000102, 0x1b,       0x10,
                                       0x3a,       0x174,      0x175,      0x176,      0x1d9,
                                       0x277,      0x800,      0x830,      0xc0000103};
      insn.rcx = random_.coin() ? random_.pick(kMsrs) : uint64_t(uint32_t(random_.next()));
      break;
    }
    case InsnKind::mov_cr3:  // only frames that cannot become our base: the kernel L4, or refused ones
      insn.rax = (random_.coin() ? pool_.kernel_l4_mfn : protected_frame_not_of_level(4)) << 12;
      break;
    case InsnKind::hlt: arm(op, 1000000); break;
    case InsnKind::lgdt:
    case InsnKind::lidt: insn.rax = write_pointer(16); break;
    case InsnKind::invlpg: insn.rax = fuzz_va(); break;
    default: break;
  }
}

}  // namespace lib::fuzz::detail
