// Runs one generated operation (fuzz/generator/fuzz_model.h) and puts back the CPU state it may have
// changed. Everything that may trap runs inside fuzz_try (fuzz/fuzz_probe.S).
#define __XEN_TOOLS__ 1  // sysctl.h is the tools' interface
#include <stdint.h>
#include <xen/xen.h>
#include <xen/nmi.h>
#include <xen/physdev.h>
#include <xen/sysctl.h>

#include "pv-kernel-patches/callbacks.h"
#include "pv-kernel-patches/traps.h"
#include "arch/xen.h"
#include "kernel/console/console.h"
#include "fuzz/fuzz.h"
#include "fuzz/fuzz_internal.h"
#include "pv-kernel-patches/shared_info.h"
#include "kernel/events/time.h"
#include "fuzz/generator/fuzz_entries.h"
#include "pv-kernel-patches/pv_ops.h"
#include "pv-kernel-patches/vcpu_identity.h"

extern "C" {
long fuzz_hypercall(uint64_t call, uint64_t, uint64_t);
long fuzz_hypercall_flags(uint64_t call, uint64_t flags, uint64_t);
long fuzz_iret_probe(uint64_t context, uint64_t number, uint64_t);
long fuzz_iret_call(uint64_t context, uint64_t call, uint64_t);
long fuzz_load64(uint64_t, uint64_t, uint64_t);
long fuzz_store64(uint64_t, uint64_t, uint64_t);
long fuzz_store32_low(uint64_t, uint64_t, uint64_t);
long fuzz_store32_high(uint64_t, uint64_t, uint64_t);
long fuzz_store16(uint64_t, uint64_t, uint64_t);
long fuzz_store8(uint64_t, uint64_t, uint64_t);
long fuzz_xchg64(uint64_t, uint64_t, uint64_t);
long fuzz_cmpxchg64(uint64_t, uint64_t, uint64_t);
long fuzz_or64(uint64_t, uint64_t, uint64_t);
long fuzz_and64(uint64_t, uint64_t, uint64_t);
long fuzz_bts64(uint64_t, uint64_t, uint64_t);
long fuzz_btr64(uint64_t, uint64_t, uint64_t);
long fuzz_rep_stosq(uint64_t, uint64_t, uint64_t);
long fuzz_movnti64(uint64_t, uint64_t, uint64_t);
long fuzz_inb(uint64_t, uint64_t, uint64_t);
long fuzz_inw(uint64_t, uint64_t, uint64_t);
long fuzz_inl(uint64_t, uint64_t, uint64_t);
long fuzz_outb(uint64_t, uint64_t, uint64_t);
long fuzz_outw(uint64_t, uint64_t, uint64_t);
long fuzz_outl(uint64_t, uint64_t, uint64_t);
long fuzz_insb(uint64_t, uint64_t, uint64_t);
long fuzz_insw(uint64_t, uint64_t, uint64_t);
long fuzz_insl(uint64_t, uint64_t, uint64_t);
long fuzz_outsb(uint64_t, uint64_t, uint64_t);
long fuzz_outsw(uint64_t, uint64_t, uint64_t);
long fuzz_outsl(uint64_t, uint64_t, uint64_t);
extern char fuzz_int_table[];
long fuzz_insn_int3(uint64_t, uint64_t, uint64_t);
long fuzz_insn_into(uint64_t, uint64_t, uint64_t);
long fuzz_insn_hlt(uint64_t, uint64_t, uint64_t);
long fuzz_insn_cli(uint64_t, uint64_t, uint64_t);
long fuzz_insn_sti(uint64_t, uint64_t, uint64_t);
long fuzz_insn_rdmsr(uint64_t, uint64_t, uint64_t);
long fuzz_insn_wrmsr(uint64_t, uint64_t, uint64_t);
long fuzz_insn_mov_cr3(uint64_t, uint64_t, uint64_t);
long fuzz_insn_read_cr0(uint64_t, uint64_t, uint64_t);
long fuzz_insn_rdpmc(uint64_t, uint64_t, uint64_t);
long fuzz_insn_lgdt(uint64_t, uint64_t, uint64_t);
long fuzz_insn_lidt(uint64_t, uint64_t, uint64_t);
long fuzz_insn_invlpg(uint64_t, uint64_t, uint64_t);
long fuzz_insn_wbinvd(uint64_t, uint64_t, uint64_t);
long fuzz_insn_cpuid(uint64_t, uint64_t, uint64_t);
long fuzz_insn_forced_cpuid(uint64_t, uint64_t, uint64_t);
long fuzz_insn_swapgs(uint64_t, uint64_t, uint64_t);
long fuzz_insn_rdtscp(uint64_t, uint64_t, uint64_t);
long fuzz_insn_icebp(uint64_t, uint64_t, uint64_t);
}

namespace kernel {
namespace fuzz {
namespace {

using namespace lib::fuzz;
using Probe = long (*)(uint64_t, uint64_t, uint64_t);

constexpr uint64_t kFlatKernelCsFrame = 0xe030;  // as Xen writes it in frames of kernel context
constexpr uint64_t kFlatKernelSs = 0xe02b;

// Runs a probe; a trap inside it is counted (and recorded) by fuzz_fixup.
long attempt(Probe probe, uint64_t a = 0, uint64_t b = 0, uint64_t c = 0, bool* faulted = nullptr) {
  long rc = fuzz_try(probe, a, b, c);
  if (faulted) *faulted = fuzz_try_faulted;
  return rc;
}

// The L1 table an address of the fuzzed range goes through now (0: the walk stops before).
uint64_t l1_table_of(const Campaign& c, uint64_t va) {
  uint64_t table = c.kernel_l4_va;
  for (int level = 4; level >= 2; --level) {
    unsigned index = unsigned((va >> (12 + 9 * (level - 1))) & 511);
    uint64_t entry = reinterpret_cast<volatile uint64_t*>(table)[index];
    if (!(entry & 1) || (entry & kLargeBit)) return 0;
    uint64_t mfn = (entry & kAddressBits) >> 12;
    if (level == 2) return mfn;
    table = readable_va(c, mfn);
    if (!table) return ~0ull;  // a table we cannot read: treat as not ours
  }
  return 0;
}

// update_va_mapping of an address in the fuzzed range writes the L1 its path leads to: only
// if that is a scratch table (a scratch L2 may link one of the kernel's L1s, read-only).
bool va_mapping_allowed(const Campaign& c, const Call& call) {
  uint32_t low = uint32_t(call.number);
  if (low != __HYPERVISOR_update_va_mapping && low != __HYPERVISOR_update_va_mapping_otherdomain) return true;
  uint64_t va = call.args[0];
  if ((va >> 48) != 0xffff || ((va >> 39) & 511) == kKernelL4Slot) return true;  // not the fuzzed range
  uint64_t l1 = l1_table_of(c, va);
  if (l1 == 0) return true;
  for (unsigned i = 0; i < c.pool.table_count; ++i)
    if (c.pool.table_mfn[i] == l1) return true;
  return false;
}

long hypercall(Campaign& c, const Call& call) {
  if (!va_mapping_allowed(c, call)) {
    ++c.stats.stores_skipped;
    return 0;
  }
  ++c.stats.calls;
  bool faulted;
  long rc = attempt(fuzz_hypercall, reinterpret_cast<uint64_t>(&call), 0, 0, &faulted);
  if (!faulted && rc < 0) ++c.stats.call_errors;
  return rc;
}

long raw(unsigned number, uint64_t a1 = 0, uint64_t a2 = 0, uint64_t a3 = 0, uint64_t a4 = 0) {
  return arch::hypercall(number, a1, a2, a3, a4);
}

void arm_timer(uint64_t delay_ns) { xen::set_timer(system_time_ns() + delay_ns); }

// ---- direct page-table stores -------------------------------------------------------------
Probe store_probe(StoreKind kind) {
  switch (kind) {
    case StoreKind::mov64: return fuzz_store64;
    case StoreKind::mov32_low: return fuzz_store32_low;
    case StoreKind::mov32_high: return fuzz_store32_high;
    case StoreKind::mov16: return fuzz_store16;
    case StoreKind::mov8: return fuzz_store8;
    case StoreKind::xchg: return fuzz_xchg64;
    case StoreKind::cmpxchg: return fuzz_cmpxchg64;
    case StoreKind::or64: return fuzz_or64;
    case StoreKind::and64: return fuzz_and64;
    case StoreKind::bts: return fuzz_bts64;
    case StoreKind::btr: return fuzz_btr64;
    case StoreKind::misaligned: return fuzz_store64;
    case StoreKind::rep_stos: return fuzz_rep_stosq;
    case StoreKind::movnti: return fuzz_movnti64;
  }
  return fuzz_store64;
}

// The read-only mappings of frame `mfn` in the fuzzed range (the second way a guest reaches
// its page tables with plain stores): the `choice`-th found (modulo how many), with the L1
// entry that holds it. False if there is none.
struct Alias {
  uint64_t va;
  uint64_t holder_mfn;
  unsigned holder_index;
};

bool find_alias(const Campaign& c, uint64_t mfn, uint64_t choice, Alias& alias) {
  Alias found[16];
  unsigned count = 0, examined = 0;
  auto* l4 = reinterpret_cast<volatile uint64_t*>(c.kernel_l4_va);
  for (unsigned s = 0; s < kFuzzSlotCount && count < 16; ++s) {
    uint64_t e4 = l4[kFuzzL4Slots[s]];
    auto* l3 = (e4 & 1) ? reinterpret_cast<volatile uint64_t*>(readable_va(c, (e4 & kAddressBits) >> 12)) : nullptr;
    for (unsigned i3 = 0; l3 && i3 < 512 && count < 16 && examined < 4096; ++i3) {
      uint64_t e3 = l3[i3];
      if (!(e3 & 1) || (e3 & kLargeBit)) continue;
      auto* l2 = reinterpret_cast<volatile uint64_t*>(readable_va(c, (e3 & kAddressBits) >> 12));
      for (unsigned i2 = 0; l2 && i2 < 512 && count < 16 && examined < 4096; ++i2) {
        uint64_t e2 = l2[i2];
        if (!(e2 & 1) || (e2 & kLargeBit)) continue;
        uint64_t holder = (e2 & kAddressBits) >> 12;
        auto* l1 = reinterpret_cast<volatile uint64_t*>(readable_va(c, holder));
        for (unsigned i1 = 0; l1 && i1 < 512 && count < 16; ++i1, ++examined) {
          uint64_t e1 = l1[i1];
          if ((e1 & 1) && ((e1 & kAddressBits) >> 12) == mfn)
            found[count++] = Alias{0xffff000000000000ull | (uint64_t(kFuzzL4Slots[s]) << 39) | (uint64_t(i3) << 30) |
                                       (uint64_t(i2) << 21) | (uint64_t(i1) << 12),
                                   holder, i1};
        }
      }
    }
  }
  if (!count) return false;
  alias = found[choice % count];
  return true;
}

int scratch_table_index(const Pool& pool, uint64_t mfn) {
  for (unsigned i = 0; i < pool.table_count; ++i)
    if (pool.table_mfn[i] == mfn) return int(i);
  return -1;
}

// Several vCPUs (fuzz_vcpus): the others may change the entry between the read above and the
// store, so only a store whose result does not depend on what is there keeps the rules: a full
// store of a value that keeps them (mov, xchg, movnti, rep stos), or a cmpxchg whose new value
// keeps them. A store that keeps part of the entry (a narrow mov, or/and, bts/btr, misaligned)
// becomes a cmpxchg of the whole entry from what was read to what the rules checked (it takes
// effect only if nobody changed the entry meanwhile). False: the store is skipped.
bool concurrent_store(const Campaign& c, const Step& step, unsigned span, const uint64_t* current,
                      const uint64_t* result, uint64_t& address, uint64_t& value, uint64_t& operand, Probe& probe) {
  switch (step.store) {
    case StoreKind::mov64:
    case StoreKind::xchg:
    case StoreKind::movnti:
    case StoreKind::rep_stos:
    case StoreKind::cmpxchg: return entry_safe(c.pool, step.value);
    default: break;
  }
  if (span != 1 || step.store == StoreKind::misaligned) return false;
  address &= ~7ull;
  value = result[0];
  operand = current[0];
  probe = fuzz_cmpxchg64;
  return true;
}

void store(Campaign& c, const Step& step) {
  const Pool& pool = c.pool;
  // Which table and slot the store changes, where the kernel reads them, where it stores.
  uint64_t mfn, page;
  unsigned slot = step.slot;
  if (step.table == kKernelL4Table) {
    mfn = pool.kernel_l4_mfn;
    page = c.kernel_l4_va;
  } else {
    if (step.table >= pool.table_count) return;
    mfn = pool.table_mfn[step.table];
    page = pool.table_va[step.table];
  }
  uint64_t target = page;
  Alias alias{};
  bool aliased =
      step.table != kKernelL4Table && step.path != StorePath::direct_map && find_alias(c, mfn, step.alias, alias);
  if (step.path == StorePath::alias_holder) {
    int holder = aliased ? scratch_table_index(pool, alias.holder_mfn) : -1;
    if (holder < 0 || !is_scratch_table_slot(pool, alias.holder_mfn * 4096 + alias.holder_index * 8ull) ||
        (step.store == StoreKind::misaligned || step.store == StoreKind::rep_stos)) {
      ++c.stats.stores_skipped;
      return;
    }
    mfn = alias.holder_mfn;
    page = target = pool.table_va[holder];
    slot = alias.holder_index;
  } else if (aliased) {
    target = alias.va;
  }
  // The table's contents are read through its direct-map address, so that must map it.
  int index = scratch_table_index(pool, mfn);
  if (step.table != kKernelL4Table && (index < 0 || direct_map_target(c, unsigned(index)) != mfn)) {
    ++c.stats.stores_skipped;
    return;
  }
  // What the store leaves in the entries it touches must keep the rules too.
  auto* entries = reinterpret_cast<volatile uint64_t*>(page);
  uint64_t current[8], result[8];
  unsigned span = store_span(step);
  for (unsigned i = 0; i < span; ++i) current[i] = entries[slot + i];
  store_result(step, current, result);
  for (unsigned i = 0; i < span; ++i) {
    if (!entry_safe(pool, result[i])) {
      ++c.stats.stores_skipped;
      return;
    }
  }
  uint64_t address = target + slot * 8ull + (step.store == StoreKind::misaligned ? (step.operand & 7) : 0);
  uint64_t operand = step.operand;
  if (step.store == StoreKind::cmpxchg && operand == kUseCurrent) operand = current[0];
  Probe probe = store_probe(step.store);
  uint64_t value = step.value;
  if (c.options.vcpus > 1 && !concurrent_store(c, step, span, current, result, address, value, operand, probe)) {
    ++c.stats.stores_skipped;
    return;
  }
  ++c.stats.stores;
  bool faulted;
  attempt(probe, address, value, operand, &faulted);
  if (faulted) ++c.stats.store_faults;
}

void load(Campaign& c, uint64_t va) {
  ++c.stats.loads;
  bool faulted;
  attempt(fuzz_load64, va, 0, 0, &faulted);
  if (faulted) ++c.stats.load_faults;
}

// A store through the fuzzed range lands only where a scratch data frame is mapped writable.
void touch_store(Campaign& c, const Step& step) {
  uint64_t entry = leaf_entry(c, step.va);
  uint64_t mfn = (entry & kAddressBits) >> 12;
  bool data = false;
  for (unsigned i = 0; i < c.pool.data_count; ++i) data = data || c.pool.data_mfn[i] == mfn;
  if (!(entry & 1) || !(entry & kWritableBit) || !data) {
    load(c, step.va);
    return;
  }
  ++c.stats.stores;
  bool faulted;
  attempt(fuzz_store64, step.va & ~7ull, step.value, 0, &faulted);
  if (faulted) ++c.stats.store_faults;
}

void steps(Campaign& c, const Op& op) {
  for (unsigned i = 0; i < op.step_count; ++i) {
    const Step& step = op.steps[i];
    switch (step.kind) {
      case Step::Kind::store: store(c, step); break;
      case Step::Kind::load: load(c, step.va); break;
      case Step::Kind::touch_store: touch_store(c, step); break;
      case Step::Kind::settle: settle(); break;
      case Step::Kind::rebuild: rebuild(c); break;
      case Step::Kind::alias_load: {
        Alias alias;
        if (step.table < c.pool.table_count && find_alias(c, c.pool.table_mfn[step.table], step.alias, alias))
          load(c, alias.va + (step.slot & 511) * 8ull);
        break;
      }
    }
  }
}

// ---- iret -----------------------------------------------------------------------------
uint64_t iret_rip(const IretFrame& frame) {
  switch (frame.rip) {
    case IretFrame::Rip::landing: return reinterpret_cast<uint64_t>(fuzz_iret_landing);
    case IretFrame::Rip::non_canonical:
      return 0x0000800000000000ull | reinterpret_cast<uint64_t>(fuzz_iret_landing) >> 20;
    case IretFrame::Rip::unmapped: return kVirtBase + (1ull << 30) - (10ull << 20);
    case IretFrame::Rip::hypervisor: return 0xffff830000001000ull;
  }
  return reinterpret_cast<uint64_t>(fuzz_iret_landing);
}

// The iret context on the landing stack (where the iret probes put the stack pointer).
uint64_t* iret_context(const Campaign& c, const IretFrame& frame);

void iret(Campaign& c, const Op& op) {
  uint64_t* context = iret_context(c, op.iret);
  ++c.stats.irets;
  bool faulted;
  attempt(fuzz_iret_probe, reinterpret_cast<uint64_t>(context), op.iret.number, 0, &faulted);
  if (faulted) ++c.stats.iret_faults;
}

// A multicall that may run an iret entry (Xen does): made with the stack pointer at a context.
void iret_call(Campaign& c, const Op& op) {
  uint64_t* context = iret_context(c, op.iret);
  ++c.stats.calls;
  bool faulted;
  attempt(fuzz_iret_call, reinterpret_cast<uint64_t>(context), reinterpret_cast<uint64_t>(&op.call), 0, &faulted);
  if (faulted) ++c.stats.iret_faults;
}

uint64_t* iret_context(const Campaign& c, const IretFrame& frame) {
  uint64_t top = c.iret_stack_top;
  uint64_t landing_rsp = top - 4096;
  switch (frame.rsp) {
    case IretFrame::Rsp::landing_stack: break;
    case IretFrame::Rsp::misaligned: landing_rsp -= 3; break;
    case IretFrame::Rsp::unmapped: landing_rsp = kVirtBase + (1ull << 30) - (10ull << 20); break;
    case IretFrame::Rsp::non_canonical: landing_rsp = 0x0000900000000000ull; break;
    case IretFrame::Rsp::hypervisor: landing_rsp = 0xffff830000100000ull; break;
  }
  uint64_t* context = reinterpret_cast<uint64_t*>(top - 128);
  const uint64_t words[9] = {frame.rax, frame.r11,    frame.rcx,   frame.flags, iret_rip(frame),
                             frame.cs,  frame.rflags, landing_rsp, frame.ss};
  for (unsigned i = 0; i < 9; ++i) context[i] = words[i];
  return context;
}

// ---- ports and instructions -----------------------------------------------------------
long set_iopl(uint32_t iopl) {
  physdev_set_iopl_t request{iopl};
  return raw(__HYPERVISOR_physdev_op, PHYSDEVOP_set_iopl, reinterpret_cast<uint64_t>(&request));
}

void port(Campaign& c, const Op& op) {
  const PortAccess& access = op.port;
  set_iopl(access.iopl);
  unsigned width = access.width == 4 ? 2 : access.width == 2 ? 1 : 0;
  static const Probe kIn[] = {fuzz_inb, fuzz_inw, fuzz_inl}, kOut[] = {fuzz_outb, fuzz_outw, fuzz_outl};
  static const Probe kIns[] = {fuzz_insb, fuzz_insw, fuzz_insl}, kOuts[] = {fuzz_outsb, fuzz_outsw, fuzz_outsl};
  uint64_t buffer = c.pool.buffer_va;
  bool faulted;
  if (access.string)
    attempt(access.out ? kOuts[width] : kIns[width], access.port, buffer, access.count, &faulted);
  else
    attempt(access.out ? kOut[width] : kIn[width], access.port, access.value, 0, &faulted);
}

void instruction(Campaign&, const Op& op) {
  const Insn& insn = op.insn;
  Probe probe;
  uint64_t a = insn.rax, b = insn.rcx, d = insn.rdx;
  switch (insn.kind) {
    case InsnKind::int_n: probe = reinterpret_cast<Probe>(fuzz_int_table + 4 * insn.vector); break;
    case InsnKind::int3: probe = fuzz_insn_int3; break;
    case InsnKind::into: probe = fuzz_insn_into; break;
    case InsnKind::hlt: probe = fuzz_insn_hlt; break;
    case InsnKind::cli: probe = fuzz_insn_cli; break;
    case InsnKind::sti: probe = fuzz_insn_sti; break;
    case InsnKind::rdmsr: probe = fuzz_insn_rdmsr; break;
    case InsnKind::wrmsr: probe = fuzz_insn_wrmsr; break;
    case InsnKind::mov_cr3: probe = fuzz_insn_mov_cr3; break;
    case InsnKind::mov_cr0_read: probe = fuzz_insn_read_cr0; break;
    case InsnKind::rdpmc: probe = fuzz_insn_rdpmc; break;
    case InsnKind::lgdt: probe = fuzz_insn_lgdt; break;
    case InsnKind::lidt: probe = fuzz_insn_lidt; break;
    case InsnKind::invlpg: probe = fuzz_insn_invlpg; break;
    case InsnKind::wbinvd: probe = fuzz_insn_wbinvd; break;
    case InsnKind::cpuid: probe = fuzz_insn_cpuid; break;
    case InsnKind::ud2: probe = fuzz_insn_forced_cpuid; break;
    case InsnKind::swapgs: probe = fuzz_insn_swapgs; break;
    case InsnKind::rdtscp: probe = fuzz_insn_rdtscp; break;
    case InsnKind::icebp: probe = fuzz_insn_icebp; break;
    default: return;
  }
  // rdmsr/wrmsr/rdpmc/cpuid take the MSR or leaf in the second argument; wrmsr the value in the first.
  attempt(probe, a, b, d);
}

long sysctl_tbuf_disable() {
  xen_sysctl_t request{};
  request.cmd = XEN_SYSCTL_tbuf_op;
  request.interface_version = XEN_SYSCTL_INTERFACE_VERSION;
  request.u.tbuf_op.cmd = XEN_SYSCTL_TBUFOP_disable;
  return raw(__HYPERVISOR_sysctl, reinterpret_cast<uint64_t>(&request));
}

}  // namespace

void restore(Campaign& c, uint32_t what) {
  if (what & kRestoreBase) pv::ops.raw_mmuext(MMUEXT_NEW_BASEPTR, c.pool.kernel_l4_mfn);
  if (what & kRestoreVmAssist) {
    static const unsigned kTypes[] = {VMASST_TYPE_4gb_segments,        VMASST_TYPE_4gb_segments_notify,
                                      VMASST_TYPE_writable_pagetables, VMASST_TYPE_pae_extended_cr3,
                                      VMASST_TYPE_architectural_iopl,  VMASST_TYPE_runstate_update_flag,
                                      VMASST_TYPE_m2p_strict};
    for (unsigned type : kTypes) raw(__HYPERVISOR_vm_assist, VMASST_CMD_disable, type);
    pv::vm_assists_install();                                      // the kernel's own, as at boot
    pv::ops.raw_mmuext(MMUEXT_NEW_BASEPTR, c.pool.kernel_l4_mfn);  // m2p_strict may have zapped a slot
  }
  if (what & kRestoreTraps) {
    pv::traps_remove_all();
    pv::traps_install();
  }
  if (what & kRestoreCallbacks) pv::callbacks_install();
  if (what & kRestoreNmi) {
    callback_unregister_t nmi{};
    nmi.type = CALLBACKTYPE_nmi;
    raw(__HYPERVISOR_callback_op, CALLBACKOP_unregister, reinterpret_cast<uint64_t>(&nmi));
    raw(__HYPERVISOR_nmi_op, XENNMI_unregister_callback, 0);
  }
  if (what & kRestoreFpu) raw(__HYPERVISOR_fpu_taskswitch, 0);
  if (what & kRestoreSegments) {
    raw(__HYPERVISOR_set_segment_base, SEGBASE_FS, 0);
    raw(__HYPERVISOR_set_segment_base, SEGBASE_GS_USER, 0);
    raw(__HYPERVISOR_set_segment_base, SEGBASE_GS_KERNEL, 0);
    raw(__HYPERVISOR_set_segment_base, SEGBASE_GS_USER_SEL, 0);
  }
  if (what & kRestoreTimers) {
    xen::vcpu_op(VCPUOP_stop_periodic_timer, 0, nullptr);
    xen::vcpu_op(VCPUOP_stop_singleshot_timer, 0, nullptr);
    xen::set_timer(0);
  }
  if (what & kRestoreIopl) set_iopl(0);
  if ((what & kRestoreTbuf) && c.pool.privileged) sysctl_tbuf_disable();
  if (what & kRestoreDebugRegs) raw(__HYPERVISOR_set_debugreg, 7, 0);
  if (what & kRestoreLdt) {
    mmuext_op_t op{};
    op.cmd = MMUEXT_SET_LDT;
    raw(__HYPERVISOR_mmuext_op, reinterpret_cast<uint64_t>(&op), 1, 0, DOMID_SELF);
  }
  if (what & kRestoreGdt) arch::hypercall(__HYPERVISOR_set_gdt, 0, 0);  // no frames: the reserved entries only
  if (what & kRestoreVcpuAreas) {
    vcpu_register_runstate_memory_area_t area{};
    xen::vcpu_op(VCPUOP_register_runstate_memory_area, 0, &area);
    vcpu_register_time_memory_area_t time{};
    xen::vcpu_op(VCPUOP_register_vcpu_time_memory_area, 0, &time);
  }
}

void execute(Campaign& c, const Op& op) {
  if (op.arm_timer) arm_timer(op.arm_timer_ns);
  switch (op.kind) {
    case OpKind::call:
    case OpKind::mmu:
    case OpKind::mmuext:
    case OpKind::va_mapping:
    case OpKind::multicall:
    case OpKind::sched:
      if (op.iret_frame)
        iret_call(c, op);
      else
        hypercall(c, op.call);
      break;
    case OpKind::rflags: {
      if (!va_mapping_allowed(c, op.call)) break;
      ++c.stats.calls;
      attempt(fuzz_hypercall_flags, reinterpret_cast<uint64_t>(&op.call), op.rflags, 0);
      break;
    }
    case OpKind::ptwrite:
    case OpKind::touch: steps(c, op); break;
    case OpKind::iret: iret(c, op); break;
    case OpKind::ports: port(c, op); break;
    case OpKind::insn: instruction(c, op); break;
    case OpKind::hv_frames: execute_hv_frames(c, op); break;
    case OpKind::destroy: execute_destroy(c, op); break;
  }
  // The kernel runs with events masked (an iret, sti or block may have unmasked them).
  pv::ops.disable_events();
  restore(c, op.restore);
}

}  // namespace fuzz

// Traps inside a probe: single-step and alignment-check traps continue with the flag
// cleared (the hostile flags the operation set); anything else resumes at the recovery.
bool fuzz_fixup(TrapFrame& frame) {
  // The probes run on vCPU 0 only; the other vCPUs' streams make hypercalls, which do not trap.
  if (current_vcpu_id() != 0) return false;
  if (!fuzz_try_active) return false;
  if (frame.vector == TrapFrame::kEventVector || frame.vector == TrapFrame::kSyscallVector) return false;
  fuzz::Campaign& c = fuzz::campaign;
  constexpr uint64_t kTf = 1u << 8, kAc = 1u << 18, kNt = 1u << 14, kDf = 1u << 10, kRf = 1u << 16;
  if (frame.vector == 1 && (frame.rflags & kTf)) {
    frame.rflags &= ~kTf;
    ++c.stats.continued;
    return true;
  }
  if (frame.vector == 17 && (frame.rflags & kAc)) {
    frame.rflags &= ~kAc;
    ++c.stats.continued;
    return true;
  }
  ++c.stats.faults;
  c.last_trap = fuzz::TrapRecord{frame.vector, frame.error_code, frame.rip, frame.vector == 14 ? vcpu()->arch.cr2 : 0};
  frame.rip = reinterpret_cast<uint64_t>(fuzz_try_recovery);
  frame.cs = fuzz::kFlatKernelCsFrame;
  frame.ss = fuzz::kFlatKernelSs;
  frame.rflags &= ~(kTf | kAc | kNt | kDf | kRf);
  return true;
}

}  // namespace kernel
