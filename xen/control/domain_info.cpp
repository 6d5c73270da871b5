#include "control/domain_info.h"

namespace control {
namespace {
uint32_t vcpu_flags(const DomainFacts& facts, uint32_t& online, uint32_t& max_vcpu_id, uint64_t& cpu_time) {
  uint32_t flags = XEN_DOMINF_blocked;
  for (unsigned i = 0; i < facts.vcpu_count; ++i) {
    const VcpuFacts& vcpu = facts.vcpus[i];
    cpu_time += vcpu.running_ns;
    max_vcpu_id = vcpu.id;
    if (!vcpu.online) continue;
    if (!vcpu.blocked) flags &= ~XEN_DOMINF_blocked;
    if (vcpu.running) flags |= XEN_DOMINF_running;
    ++online;
  }
  return online ? flags : 0;
}
}  // namespace

void fill_domain_info(const DomainFacts& facts, xen_domctl_getdomaininfo& info) {
  info = xen_domctl_getdomaininfo{};
  info.domain = facts.id;
  info.max_vcpu_id = XEN_INVALID_MAX_VCPU_ID;
  uint32_t online = 0;
  uint64_t cpu_time = 0;
  uint32_t flags = vcpu_flags(facts, online, info.max_vcpu_id, cpu_time);
  info.nr_online_vcpus = online;
  info.cpu_time = cpu_time;
  if (facts.dead) flags |= XEN_DOMINF_dying;
  if (facts.shut_down) flags |= XEN_DOMINF_shutdown;
  if (facts.paused_by_controller) flags |= XEN_DOMINF_paused;
  if (facts.hvm) flags |= XEN_DOMINF_hvm_guest;
  if (facts.xenstore_domain) flags |= XEN_DOMINF_xs_domain;
  info.flags = flags | facts.shutdown_code << XEN_DOMINF_shutdownshift;
  info.tot_pages = facts.tot_pages;
  info.max_pages = facts.max_pages;
  info.shared_info_frame = facts.shared_info_frame;
  info.ssidref = facts.ssidref;
  info.cpupool = facts.cpupool;
  if (facts.handle)
    for (unsigned i = 0; i < sizeof(info.handle); ++i) info.handle[i] = facts.handle[i];
  info.gpaddr_bits = facts.gpaddr_bits;
}

int first_at_or_after(DomainIds domains, uint32_t wanted) {
  for (unsigned i = 0; i < domains.count; ++i)
    if (domains.ids[i] >= wanted) return int(i);
  return no_domain;
}

Selection select_for_getdomaininfo(DomainIds domains, uint32_t requested) {
  int exact = first_at_or_after(domains, requested);
  if (exact != no_domain && domains.ids[exact] == requested) return {0, exact};
  if (requested >= DOMID_FIRST_RESERVED) return {-XEN_EINVAL, no_domain};
  if (exact == no_domain) return {-XEN_ESRCH, no_domain};
  return {0, exact};
}
}  // namespace control
