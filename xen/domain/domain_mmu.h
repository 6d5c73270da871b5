// The MMU context a domain's page-table operations run in: the frame table, the domain's
// identity, the hypervisor's L4 slots and the M2P table.
#pragma once
#include "mm/mmu_context.h"

struct Domain;

namespace domain_mmu {
mm::DomainIdentity identity(const Domain& domain);  // who the MMU rules act for
mm::MmuContext context(const Domain& domain);
// Why a flush was asked for, as recorded in TLB_FLUSH trace records (trace/EVENTS.md).
enum class FlushReason : uint32_t { unhook = 1, rehook = 2, guest_request = 3 };
// Carries out what an MMU operation asked of the hardware (CR3 reloads, TLB flushes).
void apply_effects(const mm::MmuEffects& effects, FlushReason reason = FlushReason::guest_request);

// The type-change flush (mm::TypeChangeHook): a frame that changes type (writable data
// becoming a page table, a table becoming writable) may still have translations from its old
// use in the TLB. Every MMU context carries the hook; it marks the flush pending, and the
// flush happens before anything can write through such a translation: before the hypervisor
// writes guest memory (this call, from guest_memory::copy_to) and before the guest runs again
// (apply_effects, from MmuEffects::flush_domain_tlbs). On one CPU that is exactly when it is
// needed; with several CPUs running a domain the hook must flush them synchronously (IPIs).
namespace detail {
extern bool type_change_flush_pending;
void flush_for_type_change();
}  // namespace detail
inline void flush_after_type_change() {
  if (detail::type_change_flush_pending) [[unlikely]] detail::flush_for_type_change();
}
}  // namespace domain_mmu
