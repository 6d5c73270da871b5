#include "domain/domain.h"
#include "mm/xen_abi.h"
#include <xen/sched.h>
#include "console/console.h"

vcpu_info_t* Vcpu::info() const { return &domain->shared_info->vcpu_info[id]; }

namespace domains {
namespace {
Domain domain0;
Vcpu* running = nullptr;
}  // namespace

Vcpu* current() { return running; }
void set_current(Vcpu* vcpu) { running = vcpu; }
Domain* dom0() { return &domain0; }

Domain* create(domid_t id, bool privileged) {
  if (id != 0) return nullptr;  // one domain for now: the toolstack issue adds more
  Domain& d = domain0;
  d.id = id;
  d.privileged = privileged;
  d.vcpu0.domain = &d;
  d.vcpu0.id = 0;
  return &d;
}

void crash(Domain& domain, const char* why) {
  if (!domain.alive()) return;
  printk("Domain %u crashed: %s\n", domain.id, why);
  domain.state = DomainState::crashed;
  domain.shutdown_reason = SHUTDOWN_crash;
}

void shutdown(Domain& domain, unsigned reason) {
  if (!domain.alive()) return;
  domain.state = reason == SHUTDOWN_crash ? DomainState::crashed : DomainState::shut_down;
  domain.shutdown_reason = reason;
}
}  // namespace domains
