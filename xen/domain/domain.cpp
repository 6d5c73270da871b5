#include "domain/domain.h"
#include "common/placement_new.h"
#include "abi/xen_abi.h"
#include <xen/sched.h>
#include "arch/x86/cpu/per_cpu.h"
#include "arch/x86/cpu/fpu.h"
#include "arch/x86/platform/smp_boot.h"
#include "console/console.h"
#include "memory/boot_memory.h"
#include "mm/domain_identity.h"
#include "tracing/trace_buffers.h"

namespace domains {
namespace {
// Raw storage (in .bss, not an initialised image section): a slot is constructed when created.
alignas(Domain) unsigned char storage[max_domains][sizeof(Domain)];
bool in_use[max_domains];
Domain& slot_at(unsigned index) { return *reinterpret_cast<Domain*>(storage[index]); }
StopNotifier stop_notifier;
}  // namespace

namespace detail {
Vcpu* running[MAX_CPUS] = {};
bool vcpus_on_every_cpu = false;
}  // namespace detail

namespace {
trace_buffers::Running running_ids() {
  const Vcpu* vcpu = current();
  return trace_buffers::Running{uint16_t(vcpu ? vcpu->domain->id : DOMID_IDLE),
                                uint16_t(vcpu ? vcpu->id : per_cpu::this_cpu())};
}

// The frame table's view of the guest domains (installed by init; local, so their addresses
// are taken RIP-relative where an external function's would need a GOT entry): a domain's
// frames are on its page list, and a frame it lost goes back out of its tot_pages.
mm::PageList* page_list_of(domid_t owner) {
  if (!mm::is_guest_domain(owner)) return nullptr;  // the hypervisor's and I/O frames are not listed
  Domain* domain = find(owner);
  return domain ? &domain->pages : nullptr;
}

void frame_released(uint64_t mfn, domid_t owner, bool counted) {
  if (!mm::is_guest_domain(owner)) return;
  boot_memory::free_guest_frame(mfn);
  Domain* domain = counted ? find(owner) : nullptr;
  if (domain && domain->tot_pages && mfn != domain->shared_info_mfn) --domain->tot_pages;
}
}  // namespace

void init() {
  mm::FrameTable& frames = boot_memory::frame_table();
  frames.set_release_hook({frame_released});  // a domain's freed frame goes back
  frames.set_owner_lists({page_list_of});     // a domain's frames are listed with it
  trace_buffers::set_running_source(running_ids);
}

Domain* dom0() { return find(0); }

Domain* find(domid_t id) {
  for (unsigned i = 0; i < max_domains; ++i)
    if (in_use[i] && slot_at(i).id == id) return &slot_at(i);
  return nullptr;
}
Domain* at(unsigned index) { return index < max_domains && in_use[index] ? &slot_at(index) : nullptr; }

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
  Domain& d = *new (storage[slot]) Domain();
  in_use[slot] = true;
  d.id = id;
  d.slot = slot;
  d.privileged = privileged;
  for (unsigned i = 0; i < Domain::vcpu_capacity; ++i) {
    d.vcpus[i].domain = &d;
    d.vcpus[i].id = i;
    fpu::initial_state(d.vcpus[i].fpu_state);
    // Xen's defaults: every CPU (reported as the nr_cpu_ids listed), dom0's hard mask the
    // online CPUs (sched_setup_dom0_vcpus); the same when maxcpus= leaves none down.
    const CpuMask every = CpuMask::first(smp_boot::possible_cpus()) | smp_boot::online_mask();
    d.vcpus[i].hard_affinity = privileged ? smp_boot::online_mask() : every;
    d.vcpus[i].soft_affinity = every;
  }
  return &d;
}

void release(Domain& domain) {
  if (domain.slot < max_domains && &slot_at(domain.slot) == &domain) in_use[domain.slot] = false;
}

void set_stop_notifier(StopNotifier notify) { stop_notifier = notify; }

void crash(Domain& domain, const char* why) {
  if (!domain.alive()) return;
  printk("Domain %u crashed: %s\n", domain.id, why);
  domain.state = DomainState::crashed;
  domain.shutdown_reason = SHUTDOWN_crash;
  stop_notifier();  // VIRQ_DOM_EXC, as Xen's domain_shutdown
}

void shutdown(Domain& domain, unsigned reason) {
  if (!domain.alive()) return;
  domain.state = reason == SHUTDOWN_crash ? DomainState::crashed : DomainState::shut_down;
  domain.shutdown_reason = reason;
  stop_notifier();
}
}  // namespace domains
