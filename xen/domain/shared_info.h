// The shared_info page of a domain: event-channel bitmaps, vcpu_info, and the time
// (vcpu_time_info and the wallclock) the guest reads without a hypercall.
#pragma once
#include <stdint.h>

struct Domain;
struct Vcpu;

namespace shared_info_page {
bool create(Domain& domain);
// The hypervisor's hold on the page (a general and a writable type reference), for the audit.
constexpr uint32_t hold_general_refs = 1, hold_type_refs = 1;
// Gives the hold back (destroydomain); the page goes with the domain's last reference.
void release(Domain& domain);
// Republishes system time for the vCPU under the version protocol (odd while writing), in its
// vcpu_info and in the time area it registered, if any.
void update_time(Vcpu& vcpu);
// VCPUOP_register_vcpu_time_memory_area, as Xen 4.17's arch_do_vcpu_op: a second copy of the
// vCPU's vcpu_time_info at a guest address (Linux's vDSO pvclock page), written at once and
// with every update of the first (Xen's update_secondary_system_time: the version first, odd,
// then the record, then the version even; nothing more once a write faults, as when the user
// page table is loaded: the record there stays whole). 0 stops it. -EFAULT for an unreadable
// argument or an area that does not start in the guest's part (guest_handle_okay checks the
// start only: an area running into the hole is accepted and its writes are dropped).
// For `vcpu` of the caller's domain; the argument is read in the caller's address space, and
// the area is written once `vcpu` runs (at once when it is the caller).
long register_time_area(Vcpu& caller, Vcpu& vcpu, uint64_t argument);
}  // namespace shared_info_page
