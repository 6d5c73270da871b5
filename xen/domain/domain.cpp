#include "domain/domain.h"
#include "common/placement_new.h"
#include "mm/xen_abi.h"
#include <xen/sched.h>
#include "arch/x86/cpu/fpu.h"
#include "console/console.h"
#include "domain/event_channels.h"

namespace domains {
namespace {
Domain table[max_domains];
bool in_use[max_domains];
}  // namespace

namespace detail {
Vcpu* running = nullptr;
}  // namespace detail
Domain* dom0() { return find(0); }

Domain* find(domid_t id) {
  for (unsigned i = 0; i < max_domains; ++i)
    if (in_use[i] && table[i].id == id) return &table[i];
  return nullptr;
}
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

// The lowest free slot; the domain starts from a clean Domain (its last user's state gone).
Domain* create(domid_t id, bool privileged) {
  if (id >= DOMID_FIRST_RESERVED || find(id)) return nullptr;
  unsigned slot = 0;
  while (slot < max_domains && in_use[slot]) ++slot;
  if (slot == max_domains) return nullptr;
  Domain& d = *new (&table[slot]) Domain();
  in_use[slot] = true;
  d.id = id;
  d.slot = slot;
  d.privileged = privileged;
  d.vcpu0.domain = &d;
  d.vcpu0.id = 0;
  fpu::initial_state(d.vcpu0.fpu_state);
  return &d;
}

void release(Domain& domain) {
  if (domain.slot < max_domains && &table[domain.slot] == &domain) in_use[domain.slot] = false;
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
