#include "hypercall/reservation.h"
#include <xen/errno.h>
#include <xen/memory.h>
#include "domain/domain.h"
#include "memory/boot_memory.h"
#include "memory/reservation_rules.h"
#include "mm/domain_identity.h"
#include "mm/page_refs.h"
#include "domain/guest_memory.h"

namespace reservation {
namespace {
using boot_memory::invalid_m2p_entry;
using boot_memory::set_m2p;

// 2^order fresh frames for `domain`, aligned on their size (Xen's alloc_domheap_pages), or 0
// when the domain is dying (Xen's assign_pages: it gets nothing new, so its extents fail and
// the call answers how many were done), would exceed max_pages, or the allocator has no such
// run.
uint64_t allocate_extent(Domain& domain, unsigned order) {
  if (domain.pages.closed) return 0;
  if (!memory::fits_reservation(domain.tot_pages, domain.max_pages, order)) return 0;
  uint64_t count = uint64_t(1) << order, first = 0;
  if (!boot_memory::allocate_zeroed_run(count, count, first)) return 0;
  mm::FrameTable& frames = boot_memory::frame_table();
  for (uint64_t i = 0; i < count; ++i) {
    frames.assign(first + i, domain.id, &domain.pages);  // page_list_of(domain.id)
    set_m2p(first + i, invalid_m2p_entry);
  }
  domain.tot_pages += count;
  return first;
}

// Xen's guest_remove_page for a PV domain (the "gmfn" is a machine frame): a frame that is
// not in the table is -EINVAL, one that is not the domain's -ENXIO. The domain's is on its
// list: the owner id alone would take a frame an earlier domain of the same id left behind.
// The shared_info frame is the hypervisor's page shared with the domain, not part of its
// reservation: refused here.
int remove_page(Domain& domain, uint64_t mfn) {
  mm::FrameTable& frames = boot_memory::frame_table();
  mm::PageInfo* page = frames.find(mfn);
  if (!page) return -XEN_EINVAL;
  if (page->is_free() || page->owner() != domain.id || !frames.on_list(mfn, domain.pages) ||
      mfn == domain.shared_info_mfn)
    return -XEN_ENXIO;
  if (!page->allocated()) return 0;  // given back already, still referenced: nothing more to do
  set_m2p(mfn, invalid_m2p_entry);
  mm::drop_allocation(frames, mfn);  // freed now, or when the last mapping or type ref goes
  return 0;
}

struct Extents {
  Vcpu& vcpu;
  Domain& domain;
  uint64_t list;
  unsigned order;
  bool populate_on_demand;

  bool read(uint64_t i, xen_pfn_t& value) const { return guest_memory::read(vcpu, list + i * 8, value); }
  bool write(uint64_t i, xen_pfn_t value) const { return guest_memory::write(vcpu, list + i * 8, value); }

  bool increase(uint64_t i) const {
    uint64_t mfn = allocate_extent(domain, order);
    return mfn && (!list || write(i, mfn));
  }
  bool populate(uint64_t i) const {
    xen_pfn_t gpfn;
    if (!read(i, gpfn)) return false;
    // Xen: populate-on-demand is refused on oneself and is a no-op for a PV domain.
    if (populate_on_demand) return &domain != vcpu.domain;
    uint64_t mfn = allocate_extent(domain, order);
    if (!mfn) return false;
    for (uint64_t j = 0; j < (uint64_t(1) << order); ++j) set_m2p(mfn + j, gpfn + j);
    return write(i, mfn);
  }
  bool decrease(uint64_t i) const {
    xen_pfn_t mfn;
    if (!read(i, mfn)) return false;
    for (uint64_t j = 0; j < (uint64_t(1) << order); ++j)
      if (remove_page(domain, mfn + j)) return false;
    return true;
  }
};

// Xen's rcu_lock_domain_by_any_id and XSM_TARGET: the caller itself or, for the control
// domain, any domain. Xen answers the start extent (nothing done) in both failure cases.
Domain* target_of(Vcpu& vcpu, domid_t id) {
  Domain* domain = id == DOMID_SELF ? vcpu.domain : domains::find(id);
  if (!domain || (domain != vcpu.domain && !vcpu.domain->privileged)) return nullptr;
  return domain;
}
}  // namespace

long run(Vcpu& vcpu, hypercall::Arguments& args, Operation operation, uint64_t start_extent) {
  xen_memory_reservation_t request;
  if (!guest_memory::read(vcpu, args.a[1], request)) return long(start_extent);
  memory::ReservationRequest checked{uint64_t(request.extent_start.p), request.nr_extents, request.extent_order,
                                     start_extent};
  if (!memory::continuation_encodable(checked.nr_extents) || start_extent >= checked.nr_extents)
    return long(start_extent);
  Domain* domain = target_of(vcpu, request.domid);
  if (!domain) return long(start_extent);
  if (!memory::reservation_proceeds(checked, vcpu.domain->privileged, operation != Operation::increase))
    return long(start_extent);
  bool on_demand = operation == Operation::populate && (request.mem_flags & XENMEMF_populate_on_demand);
  Extents extents{vcpu, *domain, checked.extent_list, request.extent_order, on_demand};
  uint64_t i = start_extent;
  for (; i < checked.nr_extents; ++i) {
    if (i != start_extent && hypercall::preemption_requested()) {
      args.a[0] = memory::continuation_command(unsigned(args.a[0] & memory::command_mask), i);
      return hypercall::restart;
    }
    bool done = operation == Operation::increase   ? extents.increase(i)
                : operation == Operation::populate ? extents.populate(i)
                                                   : extents.decrease(i);
    if (!done) break;
  }
  return long(i);
}

}  // namespace reservation
