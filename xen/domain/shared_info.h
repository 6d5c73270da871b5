// The shared_info page of a domain: event-channel bitmaps, vcpu_info, and the time
// (vcpu_time_info and the wallclock) the guest reads without a hypercall.
#pragma once

struct Domain;
struct Vcpu;

namespace shared_info_page {
bool create(Domain& domain);
// Republishes system time for the vCPU under the version protocol (odd while writing).
void update_time(Vcpu& vcpu);
}  // namespace shared_info_page
