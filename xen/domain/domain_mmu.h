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
}  // namespace domain_mmu
