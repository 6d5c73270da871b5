#include "domain/domain_mmu.h"
#include "arch/x86/cpu/registers.h"
#include "domain/domain.h"
#include "hypervisor/perf_counters.h"
#include "memory/boot_memory.h"
#include "pv/bounce.h"

namespace domain_mmu {
mm::MmuContext context(const Domain& domain) {
  mm::DomainIdentity identity{domain.id, domain.privileged,
                              bool(domain.vm_assist & (1UL << VMASST_TYPE_m2p_strict))};
  return mm::MmuContext{boot_memory::frame_table(), identity, boot_memory::hypervisor_slots(), boot_memory::m2p()};
}

// One vCPU on one CPU: "all vCPUs" and "the domain's CPUs" are this CPU.
void apply_effects(const mm::MmuEffects& effects) {
  Vcpu* vcpu = domains::current();
  if (effects.load_kernel_base || effects.user_base_changed) {
    if (vcpu) pv::load_guest_page_table(*vcpu);
    perf::add(perf::Counter::tlb_flushes);
  } else if (effects.flush_domain_tlbs || effects.flush_local_tlb || effects.flush_all_vcpu_tlbs) {
    cpu::flush_tlb_local();
    perf::add(perf::Counter::tlb_flushes);
  } else if (effects.invalidate_page_local || effects.invalidate_page_all_vcpus) {
    cpu::invlpg(effects.invalidate_address);
    perf::add(perf::Counter::tlb_invlpgs);
  }
}
}  // namespace domain_mmu
