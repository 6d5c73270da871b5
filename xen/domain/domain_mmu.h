// The MMU context a domain's page-table operations run in: the frame table, the domain's
// identity, the hypervisor's L4 slots and the M2P table.
#pragma once
#include "arch/x86/cpu/cpu_mask.h"
#include "arch/x86/cpu/per_cpu.h"
#include "domain/domain.h"
#include "memory/boot_memory.h"
#include "mm/guest_frame_write_ref.h"
#include "mm/mmu_context.h"

namespace domain_mmu {
namespace detail {
// The interrupt hardware no domain may program (domain_mmu.cpp), found once the local APIC is up.
extern mm::InterruptHardware interrupt_hardware;
extern bool interrupt_hardware_known;
void find_interrupt_hardware();
// The hook below, as data: an extern function's address would need a GOT entry in this image.
extern const mm::TypeChangeHook type_change_hook;
}  // namespace detail

// Who the MMU rules act for.
inline mm::DomainIdentity identity(const Domain& domain) {
  return mm::DomainIdentity{domain.id, domain.privileged, bool(domain.vm_assist & (1UL << VMASST_TYPE_m2p_strict))};
}

inline const mm::InterruptHardware& interrupt_hardware() {
  if (!detail::interrupt_hardware_known) [[unlikely]]
    detail::find_interrupt_hardware();
  return detail::interrupt_hardware;
}

// Inline and built in one go: every emulated PTE write and MMU hypercall builds one, and a
// call that zeroed the whole context before filling it was a twentieth of the emulated write.
inline mm::MmuContext context(const Domain& domain) {
  return mm::MmuContext{.frames = boot_memory::frame_table(),
                        .domain = identity(domain),
                        .hypervisor_slots = boot_memory::hypervisor_slots(),
                        .m2p = boot_memory::m2p(),
                        .effects = {},
                        .type_change = detail::type_change_hook,
                        .page_owner = DOMID_SELF,
                        .tables_of_caller = true,
                        .interrupt_hardware = interrupt_hardware()};
}
// A context of `domain` for the paths that build one per fault or per hypercall (the emulated
// PTE write, the writable path's detach, the MMU hypercalls' batches): one per-CPU context
// whose machine-wide members, the same for every domain, are context()'s and set once (the
// interrupt hardware once it is known); the domain's identity, page_owner, tables_of_caller and
// the effects are set on every call. Valid until the next call, so no user may nest another.
// None does: a batch's requests, a detach and an emulated write call no hypercall and take no
// emulated fault, and reattach_unhooked, which a fault on guest memory may reach in the middle
// of any of them, builds a context of its own. Callers change nothing but those three and the
// effects. Copying a fresh context member by member was a twentieth of the emulated write and
// a quarter of the hypercall glue of a one-entry mmu_update.
namespace detail {
extern mm::MmuContext* reused_context;  // null until built with the interrupt hardware known
mm::MmuContext& build_reused_context(const Domain& domain);
}  // namespace detail
inline mm::MmuContext& reused_context(const Domain& domain) {
  if (detail::reused_context == nullptr) [[unlikely]]
    return detail::build_reused_context(domain);
  mm::MmuContext& context = *detail::reused_context;
  context.domain = identity(domain);
  context.page_owner = DOMID_SELF;
  context.tables_of_caller = true;
  context.effects = {};
  return context;
}

// Why a flush was asked for, as recorded in TLB_FLUSH trace records (trace/EVENTS.md).
enum class FlushReason : uint32_t { unhook = 1, rehook = 2, guest_request = 3 };
// Carries out what an MMU operation asked of the hardware (CR3 reloads, TLB flushes), and
// traces it (TLB_FLUSH, INVLPG) first.
void apply_effects(const mm::MmuEffects& effects, FlushReason reason = FlushReason::guest_request);
namespace detail {
void carry_out_effects(const mm::MmuEffects& effects);
}
// apply_effects without the trace point, for a path whose one trace site diverts to a copy of
// the path that calls apply_effects (the emulated PTE write, pv/page_fault.cpp). Inline: its
// effects are almost always none (MmuEffects::any, the test the MMU hypercalls make too).
inline void apply_effects_untraced(const mm::MmuEffects& effects) {
  if (effects.any()) [[unlikely]]
    detail::carry_out_effects(effects);
}

// The CPUs whose TLBs may hold translations of `domain`'s address spaces (Xen's
// dirty_cpumask): where a type change, an unpin or free of a table, or a guest's flush of all
// its vCPUs must reach. With sched_smp=1 the scheduler keeps it (Domain::dirty_cpu_bits: a CPU
// joins when it loads one of the domain's tables, leaves when it loads another domain's or the
// idle tables, a full flush here); with every vCPU on CPU 0 it is CPU 0, as before.
inline CpuMask dirty_cpus(const Domain& domain) {
  if (!domains::vcpus_on_every_cpu()) return CpuMask::only(0);
  return CpuMask::from_bits(__atomic_load_n(&domain.dirty_cpu_bits, __ATOMIC_ACQUIRE));
}
// Whether no other CPU than this one can hold a translation of the domain's: then a flush of
// this CPU's TLB (or an invlpg) is a flush of the domain's.
bool runs_here_alone(const Domain& domain);

// The type-change flush (mm::TypeChangeHook): a frame that changes type (writable data
// becoming a page table, a table becoming writable) may still have translations from its old
// use in a TLB. Every MMU context carries the hook. The other CPUs that may hold them (the
// owner's dirty CPUs that have not flushed since the frame's stamp, by the flush clock) are
// flushed at once, by a waited cross-CPU call, before the frame is validated or used; this
// CPU's flush is marked pending and happens before anything here can write through such a
// translation: before the hypervisor writes guest memory (this call, from
// guest_memory::copy_to) and before the guest runs again (apply_effects, from
// MmuEffects::flush_domain_tlbs). The pending mark is per CPU.
namespace detail {
extern bool type_change_flush_pending[MAX_CPUS];
void flush_for_type_change();
}  // namespace detail
inline void flush_after_type_change() {
  if (detail::type_change_flush_pending[per_cpu::this_cpu()]) [[unlikely]]
    detail::flush_for_type_change();
}

// The hypervisor's hold on a frame of `domain` it stores into through the direct map
// (mm/guest_frame_write_ref.h), taken with the flush a type change away from a table asks for
// done before the first store can happen. -EINVAL as take_guest_frame_write_ref.
inline int take_write_hold(Domain& domain, mm::GuestFrameWriteRef& ref, uint64_t mfn) {
  mm::MmuContext mmu = context(domain);
  if (const int rc = mm::take_guest_frame_write_ref(mmu, ref, mfn, domain.id)) return rc;
  flush_after_type_change();
  return 0;
}
inline void release_write_hold(mm::GuestFrameWriteRef& ref) {
  mm::release_guest_frame_write_ref(boot_memory::frame_table(), ref);
}
}  // namespace domain_mmu
