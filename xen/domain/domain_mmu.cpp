#include "domain/domain_mmu.h"
#include "arch/x86/platform/local_apic.h"
#include "arch/x86/cpu/per_cpu.h"
#include "arch/x86/cpu/registers.h"
#include "common/placement_new.h"
#include "domain/domain.h"
#include "perf/perf_counters.h"
#include "trace/format/events.h"
#include "tracing/trace_buffers.h"
#include "memory/boot_memory.h"
#include "domain/guest_mode.h"

namespace domain_mmu {
namespace {
// TLB_FLUSH record payload (trace/EVENTS.md): scope, then why.
constexpr uint32_t flush_scope_local = 0, flush_scope_all = 1;
constexpr uint32_t flush_reason_base_pointer = 4, flush_reason_type_change = 5;
}  // namespace
bool runs_here_alone(const Domain& domain) { return dirty_cpus(domain).without(per_cpu::this_cpu()).empty(); }

namespace detail {
bool type_change_flush_pending[MAX_CPUS] = {};

void flush_for_type_change() {
  boot_memory::flush_tlb_this_cpu();
  perf::add(perf::Counter::tlb_flushes);
  perf::add(perf::Counter::cr3_writes);
  perf::add(perf::Counter::type_change_flushes);
  type_change_flush_pending[per_cpu::this_cpu()] = false;
}

namespace {
// The owner's dirty CPUs that may hold something of the frame's old use: the others flushed
// now (the caller may hold the frame lock of a table: level page_table_frame, below the
// cross-CPU call's), this one marked. The stamp is the frame's last drop, read while its type
// count is zero: nothing can stamp it anew before the type change completes.
void note_type_change(void*, uint64_t mfn, mm::PageType, mm::PageType) {
  mm::FrameTable& frames = boot_memory::frame_table();
  const mm::PageInfo& page = frames.info(mfn);
  const Domain* owner = domains::find(page.owner());
  const CpuMask dirty = owner != nullptr ? dirty_cpus(*owner) : CpuMask::first(MAX_CPUS);
  const CpuMask holding = frames.flush_clock().cpus_holding(page.stamp(), dirty);
  const unsigned self = per_cpu::this_cpu();
  const CpuMask others = holding.without(self);
  if (!others.empty()) [[unlikely]] {
    boot_memory::flush_tlb_cpus(others);
    perf::add(perf::Counter::tlb_flushes);
    perf::add(perf::Counter::type_change_flushes);
  }
  if (holding.contains(self)) type_change_flush_pending[self] = true;
}
}  // namespace
const mm::TypeChangeHook type_change_hook{note_type_change, nullptr};
}  // namespace detail

namespace {
// AMD CPUs of families below 0x17 decode the 12 GiB below 1 TiB as HyperTransport (Xen's
// dom0_setup_permissions denies it); from 0x17 on the window sits at the top of the physical
// address width, beyond what any L1 entry here may name.
bool has_hypertransport_window() {
  cpu::CpuidResult vendor = cpu::cpuid(0);
  bool amd = vendor.ebx == 0x68747541 && vendor.edx == 0x69746e65 && vendor.ecx == 0x444d4163;  // AuthenticAMD
  uint32_t signature = cpu::cpuid(1).eax;
  uint32_t base_family = (signature >> 8) & 0xf;
  uint32_t family = base_family + (base_family == 0xf ? (signature >> 20) & 0xff : 0);
  return amd && family < 0x17;
}
}  // namespace

// The interrupt hardware no domain may program: the local APIC (the hypervisor's timer) where
// IA32_APIC_BASE put it, and the HyperTransport window where there is one. Found once, after
// the local APIC is up (before that, the defaults: the architectural APIC base).
namespace detail {
mm::InterruptHardware interrupt_hardware;
bool interrupt_hardware_known = false;

void find_interrupt_hardware() {
  if (local_apic::physical_base() == 0) return;
  interrupt_hardware.local_apic_mfn = local_apic::physical_base() >> 12;
  interrupt_hardware.hypertransport = has_hypertransport_window();
  interrupt_hardware_known = true;
}
}  // namespace detail

namespace detail {
namespace {
alignas(mm::MmuContext) uint8_t reused_context_storage[sizeof(mm::MmuContext)];
}  // namespace
mm::MmuContext* reused_context = nullptr;

mm::MmuContext& build_reused_context(const Domain& domain) {
  static_assert(__has_trivial_destructor(mm::MmuContext), "rebuilt in place without destruction");
  mm::MmuContext* context = new (reused_context_storage) mm::MmuContext(domain_mmu::context(domain));
  if (interrupt_hardware_known) reused_context = context;  // else built again next time
  return *context;
}
}  // namespace detail

// The record of what apply_effects does, written before it does it: then nothing has to be
// kept alive across its calls for the record, and tracing-off costs the site's NOP alone.
namespace {
[[gnu::noinline, gnu::cold]] void trace_effects(const mm::MmuEffects& effects, FlushReason reason) {
  if (effects.load_kernel_base || effects.user_base_changed)
    trace::record_words(trace::events::kTlbFlush, flush_scope_local, flush_reason_base_pointer);
  else if (effects.flush_local_tlb || effects.flush_all_vcpu_tlbs ||
           (effects.flush_domain_tlbs && detail::type_change_flush_pending[per_cpu::this_cpu()]))
    trace::record_words(trace::events::kTlbFlush, effects.flush_all_vcpu_tlbs ? flush_scope_all : flush_scope_local,
                        effects.flush_domain_tlbs ? flush_reason_type_change : uint32_t(reason));
  else if (effects.invalidate_page_local || effects.invalidate_page_all_vcpus)
    trace::record_words(trace::events::kInvlpg, trace::low(effects.invalidate_address),
                        trace::high(effects.invalidate_address));
}

// "All vCPUs" and "the domain's CPUs" are the domain's dirty CPUs: this one, and the others
// (none while every vCPU runs on the boot CPU) flushed by a cross-CPU call.
[[gnu::always_inline]] inline void carry_out(const mm::MmuEffects& effects) {
  Vcpu* vcpu = domains::current();
  const unsigned self = per_cpu::this_cpu();
  if (effects.load_kernel_base || effects.user_base_changed) {
    if (vcpu) guest_mode::load(*vcpu);  // a CR3 load: flushes all but global entries (PGE is off)
    perf::add(perf::Counter::tlb_flushes);
    if (vcpu) detail::type_change_flush_pending[self] = false;
  } else if (effects.flush_local_tlb || effects.flush_all_vcpu_tlbs ||
             (effects.flush_domain_tlbs && detail::type_change_flush_pending[self])) {
    // A type change whose flush is no longer pending was flushed since (guest_memory::copy_to).
    boot_memory::flush_tlb_this_cpu();
    perf::add(perf::Counter::tlb_flushes);
    perf::add(perf::Counter::cr3_writes);
    if (!effects.flush_local_tlb && !effects.flush_all_vcpu_tlbs) perf::add(perf::Counter::type_change_flushes);
    detail::type_change_flush_pending[self] = false;
    // MMUEXT_TLB_FLUSH_ALL: every CPU the domain may be cached on.
    if (effects.flush_all_vcpu_tlbs && vcpu && !runs_here_alone(*vcpu->domain)) [[unlikely]]
      boot_memory::flush_tlb_cpus(dirty_cpus(*vcpu->domain).without(self));
  } else {
    if (effects.invalidate_page_local || effects.invalidate_page_all_vcpus) {
      cpu::invlpg(effects.invalidate_address);
      perf::add(perf::Counter::tlb_invlpgs);
      // MMUEXT_INVLPG_ALL: the other CPUs the domain may be cached on flush all (no remote invlpg).
      if (effects.invalidate_page_all_vcpus && vcpu && !runs_here_alone(*vcpu->domain)) [[unlikely]]
        boot_memory::flush_tlb_cpus(dirty_cpus(*vcpu->domain).without(self));
    }
    // No full flush: a table an entry stopped linking may still be walked from the TLB.
    if (effects.table_unlinked && vcpu) {
      vcpu->domain->writable_pagetables.note_tables_unlinked();
      // For the domain's other CPUs (a domain on several CPUs): the clock after the unlink.
      if (domains::vcpus_on_every_cpu()) [[unlikely]]
        vcpu->domain->writable_pagetables.note_tables_unlinked_at(boot_memory::frame_table().flush_clock().now());
    }
    return;
  }
  if (vcpu) vcpu->domain->writable_pagetables.note_full_tlb_flush();
}
}  // namespace

void apply_effects(const mm::MmuEffects& effects, FlushReason reason) {
  if (trace_points::on()) [[unlikely]]
    trace_effects(effects, reason);
  carry_out(effects);
}

void detail::carry_out_effects(const mm::MmuEffects& effects) { carry_out(effects); }
}  // namespace domain_mmu
