// The MMU context a domain's page-table operations run in: the frame table, the domain's
// identity, the hypervisor's L4 slots and the M2P table.
#pragma once
#include "mm/mmu_context.h"

struct Domain;

namespace domain_mmu {
mm::MmuContext context(const Domain& domain);
// Carries out what an MMU operation asked of the hardware (CR3 reloads, TLB flushes).
void apply_effects(const mm::MmuEffects& effects);
}  // namespace domain_mmu
