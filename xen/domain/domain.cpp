#include "domain/domain.h"
#include "mm/xen_abi.h"
#include <xen/sched.h>
#include "arch/x86/cpu/fpu.h"
#include "console/console.h"
#include "domain/event_channels.h"

vcpu_info_t* Vcpu::info() const { return &domain->shared_info->vcpu_info[id]; }

namespace domains {
namespace {
Domain table[max_domains];
bool in_use[max_domains];
}  // namespace

namespace detail {
Vcpu* running = nullptr;
}  // namespace detail
Domain* dom0() { return find(0); }

Domain* find(domid_t id) { return id < max_domains && in_use[id] ? &table[id] : nullptr; }
Domain* at(unsigned index) { return index < max_domains && in_use[index] ? &table[index] : nullptr; }

bool any_alive() {
  bool alive = false;
  for_each([&](const Domain& domain) { alive = alive || domain.alive(); });
  return alive;
}

bool any_can_run() {
  bool controller = false, unpaused = false, paused = false;
  for_each([&](const Domain& domain) {
    if (!domain.alive()) return;
    controller = controller || domain.privileged;
    (domain.paused() ? paused : unpaused) = true;
  });
  return unpaused || (paused && controller);
}

// The table slot is the domain id: lookups stay trivial while ids are small.
Domain* create(domid_t id, bool privileged) {
  if (id >= max_domains || in_use[id]) return nullptr;
  in_use[id] = true;
  Domain& d = table[id];
  d.id = id;
  d.privileged = privileged;
  d.vcpu0.domain = &d;
  d.vcpu0.id = 0;
  fpu::initial_state(d.vcpu0.fpu_state);
  return &d;
}

void crash(Domain& domain, const char* why) {
  if (!domain.alive()) return;
  printk("Domain %u crashed: %s\n", domain.id, why);
  domain.state = DomainState::crashed;
  domain.shutdown_reason = SHUTDOWN_crash;
  event_channels::raise_domain_exception();  // VIRQ_DOM_EXC, as Xen's domain_shutdown
}

void shutdown(Domain& domain, unsigned reason) {
  if (!domain.alive()) return;
  domain.state = reason == SHUTDOWN_crash ? DomainState::crashed : DomainState::shut_down;
  domain.shutdown_reason = reason;
  event_channels::raise_domain_exception();
}
}  // namespace domains
