#include "hypercall/domain_control.h"
#include "arch/x86/cpu/registers.h"
#include "control/physinfo.h"
#include "hypercall/domain_lifecycle.h"
#include "sched/scheduler.h"

namespace domain_control {
namespace {
// Xen reports hap_paddr_bits for every domain, PV ones too; the CPU's answer never changes.
uint8_t gpaddr_bits() {
  static uint8_t bits = 0;
  if (!bits) {
    uint32_t max_extended = cpu::cpuid(0x80000000).eax;
    bits =
        control::guest_physical_address_bits(max_extended, max_extended >= 0x80000008 ? cpu::cpuid(0x80000008).eax : 0);
  }
  return bits;
}

control::VcpuFacts facts_of(const Vcpu& vcpu) {
  control::VcpuFacts facts;
  facts.id = vcpu.id;
  facts.online = vcpu.initialised && vcpu.online;  // Xen: not VPF_down (a new domain's vCPU is down)
  facts.blocked = vcpu.blocked;
  facts.running = scheduler::on_cpu(vcpu);
  facts.running_ns = scheduler::running_ns(vcpu);
  return facts;
}
}  // namespace

void describe(const Domain& domain, xen_domctl_getdomaininfo& info) {
  control::VcpuFacts vcpus[Domain::vcpu_capacity];
  unsigned count = 0;  // none before max_vcpus (max_vcpu_id invalid)
  domain.for_each_vcpu([&](const Vcpu& vcpu) { vcpus[count++] = facts_of(vcpu); });
  control::DomainFacts facts;
  facts.id = domain.id;
  facts.vcpus = vcpus;
  facts.vcpu_count = count;
  const bool stopped = domain.state != DomainState::running;     // shut down or crashed
  facts.dead = domain.teardown.state() == control::Dying::dead;  // XEN_DOMINF_dying: dead, as Xen
  facts.shut_down = stopped;
  facts.shutdown_code = stopped ? domain.shutdown_reason : control::no_shutdown_code;
  facts.xenstore_domain = domain.config.xenstore_domain;
  facts.paused_by_controller = domain.paused();
  facts.tot_pages = domain.tot_pages;
  facts.max_pages = domain.max_pages;
  facts.shared_info_frame = domain.shared_info_mfn;  // PV: the gfn is the mfn
  facts.cpupool = 0;                                 // every domain is in the one pool
  facts.handle = domain.handle;
  facts.gpaddr_bits = gpaddr_bits();
  control::fill_domain_info(facts, info);
}

void list(DomainList& list) {
  domain_lifecycle::reap_dead();  // getdomaininfolist too sees a dead domain gone once nothing holds it
  unsigned count = 0;
  domains::for_each([&](const Domain& domain) {  // slot order: sorted into id order as it goes
    unsigned at = count++;
    for (; at > 0 && list.ids[at - 1] > domain.id; --at) list.ids[at] = list.ids[at - 1];
    list.ids[at] = domain.id;
  });
  list.view = control::DomainIds{list.ids, count};
}

long pause(Domain& domain) {
  bool was_paused = domain.paused();
  if (long error = domain.controller_pause.pause()) return error;
  if (!was_paused) domain.for_each_vcpu([](Vcpu& vcpu) { scheduler::paused(vcpu); });
  scheduler::wait_until_off_cpu(domain);  // Xen's domain_pause: returns with every vCPU off its CPU
  return 0;
}

long unpause(Domain& domain) {
  if (long error = domain.controller_pause.unpause()) return error;
  domain.creation_finished = true;
  if (!domain.paused()) domain.for_each_vcpu([](Vcpu& vcpu) { scheduler::unpaused(vcpu); });
  return 0;
}
}  // namespace domain_control
