// XENMEM_increase_reservation, decrease_reservation and populate_physmap on a domain (the
// caller's own, or any for the control domain), with frames from the boot allocator and back
// to it, as Xen 4.17's memory.c does for a PV domain:
//  - populate: each extent is 2^order fresh zeroed frames, naturally aligned, owned by the
//    domain and counted in tot_pages, the M2P set to the gpfns the caller gave, the MFN of
//    the first frame written back over the gpfn; increase: the same without a gpfn (M2P
//    invalid), the MFN written back when there is a list;
//  - beyond max_pages (XEN_DOMCTL_max_mem) the extent fails and the call answers how many
//    extents were done (Xen's partial count), as it does when memory runs out or a list
//    entry cannot be read or written;
//  - decrease (Xen's guest_remove_page for PV, where the list holds MFNs): a frame that is
//    not the domain's stops the call; one still mapped or typed loses its allocation and
//    goes back to the allocator when its last reference goes (mm::FrameTable's release hook);
//  - preemptible: an extent list longer than a time slice continues (hypercall::restart)
//    with op | done << 6 in the command word, as Xen's continuation.
#pragma once
#include <stdint.h>
#include "hypercall/dispatch.h"
#include "abi/xen_abi.h"

struct Vcpu;

namespace reservation {
enum class Operation { increase, decrease, populate };
// The hypercall: `args.a[0]` the command word, `args.a[1]` the xen_memory_reservation.
long run(Vcpu& vcpu, hypercall::Arguments& args, Operation operation, uint64_t start_extent);
}  // namespace reservation
