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
// Republishes system time for the vCPU under the version protocol (odd while writing).
void update_time(Vcpu& vcpu);
}  // namespace shared_info_page
