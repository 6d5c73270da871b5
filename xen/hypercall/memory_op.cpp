// HYPERVISOR_memory_op as Xen 4.17's do_memory_op and arch_memory_op serve a PV domain: the
// reservation calls on the caller or (for the control domain) any domain (hypercall/reservation),
// the reservation queries, the per-domain e820 (set_memory_map / memory_map) and the machine's.
// The sub-op is bits 5:0 of the command; above them a continuation's start extent, which only
// the reservation calls accept (-EINVAL for the others that look, as Xen).
#include "abi/xen_abi.h"
#include <xen/errno.h>
#include <xen/memory.h>
#include <xen/xen.h>
#include "domain/domain.h"
#include "hypercall/dispatch.h"
#include "memory/machine.h"
#include "hypercall/reservation.h"
#include "memory/reservation_rules.h"
#include "domain/guest_memory.h"

namespace hypercall {
namespace {
// XENMEM_current_reservation and friends: the domain (-ESRCH), then XSM_TARGET (-EPERM).
long read_domid(Vcpu& vcpu, uint64_t argument, Domain*& domain) {
  domid_t id;
  if (!guest_memory::read(vcpu, argument, id)) return -XEN_EFAULT;
  domain = id == DOMID_SELF ? vcpu.domain : domains::find(id);
  if (!domain) return -XEN_ESRCH;
  if (domain != vcpu.domain && !vcpu.domain->privileged) return -XEN_EPERM;
  return 0;
}

// XENMEM_maximum_gpfn of a PV domain (Xen's domain_get_maximum_gpfn): the number of pfns the
// domain (or its builder) wrote into its shared_info's arch.max_pfn, less one; 0 when it wrote
// none. Not its tot_pages: a domain without memory would answer -1, read as -EPERM.
long maximum_gpfn(const Domain& domain) {
  const uint64_t max_pfn = domain.shared_info ? domain.shared_info->arch.max_pfn : 0;
  return long((max_pfn ? max_pfn : 1) - 1);
}

// Copies at most the guest's nr_entries and reports how many it got, as Xen does.
template <typename Entry>
long write_memory_map(Vcpu& vcpu, uint64_t argument, const Entry* entries, unsigned count) {
  xen_memory_map_t map;
  if (!guest_memory::read(vcpu, argument, map)) return -XEN_EFAULT;
  unsigned n = map.nr_entries < count ? map.nr_entries : count;
  if (!guest_memory::copy_to(vcpu, uint64_t(map.buffer.p), entries, n * sizeof(Entry))) return -XEN_EFAULT;
  map.nr_entries = n;
  return guest_memory::write(vcpu, argument, map) ? 0 : -XEN_EFAULT;
}

// XENMEM_set_memory_map (arch_memory_op): more than E820MAX entries -EINVAL, the domain
// -ESRCH, XSM_TARGET -EPERM, a map longer than this hypervisor keeps -ENOMEM, the entries
// -EFAULT. The map replaces the domain's only when all of it was read.
long set_memory_map(Vcpu& vcpu, uint64_t argument) {
  xen_foreign_memory_map_t request;
  if (!guest_memory::read(vcpu, argument, request)) return -XEN_EFAULT;
  using Map = memory::DomainMemoryMap;
  if (request.map.nr_entries > Map::xen_limit) return -XEN_EINVAL;
  Domain* domain = request.domid == DOMID_SELF ? vcpu.domain : domains::find(request.domid);
  if (!domain) return -XEN_ESRCH;
  if (domain != vcpu.domain && !vcpu.domain->privileged) return -XEN_EPERM;
  if (request.map.nr_entries > Map::capacity) return -XEN_ENOMEM;
  static memory::MemoryMapEntry entries[Map::capacity];
  unsigned count = request.map.nr_entries;
  if (!guest_memory::copy_from(vcpu, entries, uint64_t(request.map.buffer.p), count * sizeof(entries[0])))
    return -XEN_EFAULT;
  for (unsigned i = 0; i < count; ++i) domain->memory_map.entries[i] = entries[i];
  domain->memory_map.count = count;
  return 0;
}

// XENMEM_memory_map: the caller's own map; none set is -ENOSYS (Xen's "backwards
// compatibility" answer, which a PV dom0 of Xen 4.17 gets too).
long memory_map(Vcpu& vcpu, uint64_t argument) {
  const memory::DomainMemoryMap& map = vcpu.domain->memory_map;
  xen_memory_map_t request;
  if (!guest_memory::read(vcpu, argument, request)) return -XEN_EFAULT;
  if (map.count == 0) return -XEN_ENOSYS;
  return write_memory_map(vcpu, argument, map.entries, map.count);
}
}  // namespace

long memory_op(Vcpu& vcpu, TrapFrame&, Arguments& args) {
  Domain* domain = nullptr;
  long error;
  memory::MemoryCommand command = memory::decode_command(args.a[0]);
  switch (command.op) {
    case XENMEM_increase_reservation:
      return reservation::run(vcpu, args, reservation::Operation::increase, command.start_extent);
    case XENMEM_decrease_reservation:
      return reservation::run(vcpu, args, reservation::Operation::decrease, command.start_extent);
    case XENMEM_populate_physmap:
      return reservation::run(vcpu, args, reservation::Operation::populate, command.start_extent);
    case XENMEM_maximum_ram_page:
      if (command.start_extent) return -XEN_EINVAL;
      return long(machine::nr_frames() - 1);
    case XENMEM_current_reservation:
    case XENMEM_maximum_reservation:
    case XENMEM_maximum_gpfn:
      if (command.start_extent) return -XEN_EINVAL;
      if ((error = read_domid(vcpu, args.a[1], domain))) return error;
      if (command.op == XENMEM_current_reservation) return long(domain->tot_pages);
      if (command.op == XENMEM_maximum_reservation) return long(domain->max_pages);
      return maximum_gpfn(*domain);
    // arch_memory_op matches the whole command word: with a start extent these are unknown.
    case XENMEM_set_memory_map: return command.start_extent ? -XEN_ENOSYS : set_memory_map(vcpu, args.a[1]);
    case XENMEM_memory_map: return command.start_extent ? -XEN_ENOSYS : memory_map(vcpu, args.a[1]);
    case XENMEM_machine_memory_map:
      if (command.start_extent) return -XEN_ENOSYS;
      if (!vcpu.domain->privileged) return -XEN_EPERM;
      return write_memory_map(vcpu, args.a[1], machine::e820(), machine::e820_count());
    default: return -XEN_ENOSYS;
  }
}

}  // namespace hypercall
