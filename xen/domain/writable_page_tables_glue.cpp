#include "domain/writable_page_tables_glue.h"
#include "console/console.h"
#include "domain/domain.h"
#include "domain/domain_mmu.h"
#include "perf/perf_counters.h"
#include "memory/boot_memory.h"
#include "memory/machine.h"
#include "mm/page_refs.h"
#include "domain/adaptive_glue.h"
#include "trace/format/events.h"
#include "tracing/trace_buffers.h"

namespace writable_page_tables {
namespace {
// How a path writes its records: `site` tests a trace point at each record (the paths that are
// not split in two); `record` and `skip` are the two copies of a path split at one trace point
// at its start (detach, the writable path's fault), so its untraced copy costs that NOP alone.
enum class Tracing { site, record, skip };

template <Tracing tracing, typename... Words>
[[gnu::always_inline]] inline void emit(uint32_t id, Words... words) {
  if constexpr (tracing == Tracing::site)
    trace::event(id, words...);
  else if constexpr (tracing == Tracing::record)
    trace::record_words(id, uint32_t(words)...);
}

// A slot that held nothing reattached nothing, changed nothing and refused nothing.
template <Tracing tracing = Tracing::site>
void count(Domain& domain, const ptwr::ReattachStats& stats, uint64_t table_mfn) {
  if (!stats.reattached) return;
  adaptive_ptwr::reattached(domain, table_mfn, stats.changed);
  emit<tracing>(trace::events::kPtwrRehook, trace::low(table_mfn), trace::high(table_mfn), stats.changed,
                stats.revalidated, stats.refused);
  log_debug("ptwr: reattached %u (rehooked %u), %u changed, %u refused\n", stats.reattached, stats.rehooked,
            stats.changed, stats.refused);
  perf::add(perf::Counter::ptwr_rehooks, stats.reattached);
  perf::add(perf::Counter::ptwr_revalidated, stats.changed);
  if (stats.refused) {
    perf::add(perf::Counter::ptwr_emulation_refusals, stats.refused);
    log_warning("ptwr: %u entries written directly were refused at reattach (old values kept)\n", stats.refused);
  }
}

const char* decline_reason(ptwr::Decline declined) {
  switch (declined) {
    case ptwr::Decline::none: break;
    case ptwr::Decline::ineligible: return "not eligible";
    case ptwr::Decline::cuts_off_guest: return "unhook would cut off its code or stack";
    case ptwr::Decline::would_unhook: return "reachable, and the guest does not read unhooked entries";
    case ptwr::Decline::no_progress: return "last batch changed nothing";
    case ptwr::Decline::foreign_use: return "an MMU operation on its tables is under way on another CPU";
    case ptwr::Decline::shared_reachable: return "reachable, and the domain's vCPUs run on several CPUs";
  }
  return "detached";
}

void apply(Domain& domain, mm::MmuContext& context, const ptwr::ReattachStats& stats, uint64_t table_mfn) {
  domain_mmu::apply_effects(context.effects, domain_mmu::FlushReason::unhook);
  count(domain, stats, table_mfn);
}

// Reattaches one slot (the table it held is named in the trace record).
void reattach_slot(Domain& domain, mm::MmuContext& context, ptwr::SlotKind kind) {
  if (!domain.writable_pagetables.in_use(kind)) return;
  uint64_t table = domain.writable_pagetables.slot(kind).table_mfn;
  apply(domain, context, domain.writable_pagetables.reattach(context, kind), table);
}

// The domain's slots lock (ptwr::kSlotsLockClass) for a scope.
class SlotsGuard {
 public:
  explicit SlotsGuard(Domain& domain) : lock_(domain.writable_pagetables.slots_lock) {
    mm::lock_word(lock_, ptwr::kSlotsLockClass);
  }
  ~SlotsGuard() { mm::unlock_word(lock_, ptwr::kSlotsLockClass); }
  SlotsGuard(const SlotsGuard&) = delete;
  SlotsGuard& operator=(const SlotsGuard&) = delete;

 private:
  uint32_t& lock_;
};

// Both slots' hardware work is applied once, together. The caller holds the slots lock.
void reattach_both_slots_locked(Domain& domain) {
  mm::MmuContext context = domain_mmu::context(domain);
  ptwr::ReattachStats stats[2];
  uint64_t tables[2] = {};
  for (ptwr::SlotKind kind : ptwr::kSlotKinds) {
    if (!domain.writable_pagetables.in_use(kind)) continue;
    tables[unsigned(kind)] = domain.writable_pagetables.slot(kind).table_mfn;
    stats[unsigned(kind)] = domain.writable_pagetables.reattach(context, kind);
  }
  domain_mmu::apply_effects(context.effects, domain_mmu::FlushReason::unhook);
  for (ptwr::SlotKind kind : ptwr::kSlotKinds) count(domain, stats[unsigned(kind)], tables[unsigned(kind)]);
}
}  // namespace

namespace {
// ptwr::OtherCpus for a domain on several CPUs: its dirty CPUs (but this one unless asked) that
// have not made a full flush since `stamp` flush theirs, this one directly and the others by
// one waited cross-CPU call (none when every one has flushed or left the domain since).
void flush_other_cpus(void* cookie, uint64_t stamp, bool this_cpu_too) {
  Domain& domain = *static_cast<Domain*>(cookie);
  const CpuMask dirty = domain_mmu::dirty_cpus(domain);
  const CpuMask among = this_cpu_too ? dirty : dirty.without(per_cpu::this_cpu());
  if (among.empty()) return;
  const CpuMask holding = boot_memory::frame_table().flush_clock().cpus_holding(stamp, among);
  if (holding.empty()) return;
  __atomic_add_fetch(&domain.ptwr_shared_flush_calls, 1, __ATOMIC_RELAXED);
  boot_memory::flush_tlb_cpus(holding);
}
}  // namespace

namespace detail {
void reattach_both_slots(Domain& domain) {
  SlotsGuard guard(domain);
  reattach_both_slots_locked(domain);
}
}  // namespace detail

bool enable(Domain& domain) {
  uint64_t active = boot_memory::allocate_frame(DOMID_XEN);
  uint64_t inactive = boot_memory::allocate_frame(DOMID_XEN);
  domain.ptwr_snapshot_mfns[0] = active;
  domain.ptwr_snapshot_mfns[1] = inactive;
  if (!active || !inactive) {
    disable(domain);
    return false;
  }
  domain.writable_pagetables.set_snapshot_storage(machine::to_virtual<uint64_t>(active << 12),
                                                  machine::to_virtual<uint64_t>(inactive << 12));
  // With every vCPU on CPU 0 no other CPU holds anything of the domain's.
  if (domains::vcpus_on_every_cpu())
    domain.writable_pagetables.set_other_cpus(ptwr::OtherCpus{flush_other_cpus, &domain});
  return true;
}

// The storage goes under the slots lock, after the reattach: a detach on another CPU (the
// domain's own vCPU while the control domain switches its mode) then finds none.
void disable(Domain& domain) {
  {
    SlotsGuard guard(domain);
    reattach_both_slots_locked(domain);
    domain.writable_pagetables.set_snapshot_storage(nullptr, nullptr);
  }
  mm::FrameTable& frames = boot_memory::frame_table();
  for (uint64_t& mfn : domain.ptwr_snapshot_mfns) {
    if (!mfn) continue;
    mm::drop_allocation(frames, mfn);
    boot_memory::allocator().free(mfn);
    mfn = 0;
  }
}

namespace {
// Every vCPU's base pointers, the faulting one's first. Read under the slots lock; they change
// only in MMU operations (MmuOperation), and the detach declines while one runs.
[[gnu::noinline]] ptwr::DetachResult detach_on_several_cpus(Vcpu& vcpu, mm::MmuContext& context,
                                                            const ptwr::WriteFault& fault) {
  Domain& domain = *vcpu.domain;
  mm::VcpuBasePointers bases[Domain::vcpu_capacity];
  unsigned count = 0;
  bases[count++] = vcpu.bases;
  domain.for_each_vcpu([&](const Vcpu& other) {
    if (&other != &vcpu && (other.bases.kernel_mfn || other.bases.user_mfn)) bases[count++] = other.bases;
  });
  ptwr::DetachResult result = domain.writable_pagetables.detach(context, ptwr::SharedView{bases, count}, fault);
  if (result.detached) __atomic_add_fetch(&domain.ptwr_shared_detaches, 1, __ATOMIC_RELAXED);
  return result;
}

template <Tracing tracing>
[[gnu::always_inline]] inline bool detach_table(Vcpu& vcpu, const TableWriteFault& write) {
  Domain& domain = *vcpu.domain;
  const bool several_cpus = on_several_cpus(domain);
  SlotsGuard guard(domain);
  // The fault path's own context: nothing on it nests another user (reattach_unhooked, which
  // a guest access may call, builds its own).
  mm::MmuContext& context = domain_mmu::reused_context(domain);
  const uint64_t table_mfn = write.table_mfn;
  const ptwr::WriteFault fault{table_mfn, write.mapping_entry_maddr, write.address & ~0xfffULL, write.rip, write.rsp};
  ptwr::DetachResult result = several_cpus ? detach_on_several_cpus(vcpu, context, fault)
                                           : domain.writable_pagetables.detach(context, vcpu.bases, fault);
  bool evicted = false;
  for (ptwr::SlotKind kind : ptwr::kSlotKinds) {
    uint64_t evicted_table = result.evicted_table_mfn[unsigned(kind)];
    if (!result.evicted[unsigned(kind)].reattached) continue;
    emit<tracing>(trace::events::kPtwrSlotEvict, trace::low(evicted_table), trace::high(evicted_table), unsigned(kind));
    evicted = true;
  }
  if (result.detached) {
    const ptwr::Slot& slot =
        domain.writable_pagetables.slot(result.unhooked ? ptwr::SlotKind::active : ptwr::SlotKind::inactive);
    if (result.unhooked)
      emit<tracing>(trace::events::kPtwrUnhook, trace::low(table_mfn), trace::high(table_mfn),
                    uint32_t(slot.unhooked_slot_maddr & 0xfff) / 8);
    else
      emit<tracing>(trace::events::kPtwrDetachInactive, trace::low(table_mfn), trace::high(table_mfn));
    log_debug("ptwr: detach l1 %lx via %lx (%s)\n", table_mfn, write.address,
              result.unhooked ? "unhooked" : "inactive");
    perf::add(perf::Counter::ptwr_faults);
    if (result.unhooked) perf::add(perf::Counter::ptwr_unhooks);
  } else if (result.declined != ptwr::Decline::ineligible) {
    log_debug("ptwr: l1 %lx written at %lx by rip %lx is emulated (%s)\n", table_mfn, write.address, write.rip,
              decline_reason(result.declined));
  }
  if (!result.detached && !evicted) return false;  // nothing changed: the emulation does the rest
  // Slots evicted on the way were reattached even when the write is emulated after all.
  if constexpr (tracing == Tracing::skip)
    domain_mmu::apply_effects_untraced(context.effects);
  else
    domain_mmu::apply_effects(context.effects, domain_mmu::FlushReason::unhook);
  for (ptwr::SlotKind kind : ptwr::kSlotKinds)
    if (result.evicted[unsigned(kind)].reattached)
      count<tracing>(domain, result.evicted[unsigned(kind)], result.evicted_table_mfn[unsigned(kind)]);
  return result.detached;
}

[[gnu::noinline]] bool detach_traced(Vcpu& vcpu, const TableWriteFault& write) {
  return detach_table<Tracing::record>(vcpu, write);
}
}  // namespace

bool detach(Vcpu& vcpu, const TableWriteFault& write) {
  if (trace_points::on()) [[unlikely]]
    return detach_traced(vcpu, write);
  return detach_table<Tracing::skip>(vcpu, write);
}

bool reattach_unhooked(Domain& domain) {
  if (!domain.writable_pagetables.in_use(ptwr::SlotKind::active)) return false;
  SlotsGuard guard(domain);
  mm::MmuContext context = domain_mmu::context(domain);
  reattach_slot(domain, context, ptwr::SlotKind::active);
  return true;
}
}  // namespace writable_page_tables
