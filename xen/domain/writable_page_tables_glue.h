// The hypervisor side of writable pagetables: runs the pure state machine of
// ptwr/writable_pagetables on a domain, applies the TLB work it asks for and counts it.
#pragma once
#include <stdint.h>
#include "domain/domain.h"

struct Vcpu;

namespace writable_page_tables {
bool enable(Domain& domain);   // snapshot storage for the two slots; false when out of memory
void disable(Domain& domain);  // reattaches what is detached and frees the storage (destroydomain)
// A write fault by the guest kernel on its L1 `table_mfn`, mapped read-only by the L1 entry
// at `mapping_entry_maddr`, at `address`, by the instruction at `rip` with its stack at `rsp`.
struct TableWriteFault {
  uint64_t table_mfn;
  uint64_t mapping_entry_maddr;
  uint64_t address;
  uint64_t rip;
  uint64_t rsp;
};
// Detaches the table; false when the write must be emulated instead. Only in a domain that can
// run on one CPU at a time (may_detach): the slots are the domain's, and a table unreachable
// from one vCPU's address space may be reachable from another's.
bool detach(Vcpu& vcpu, const TableWriteFault& write);
// Whether the domain's writes may detach tables at all: at most one vCPU of it can run. With
// every vCPU on CPU 0 (sched_smp=0) that always holds: a switch reattaches everything. With
// sched_smp=1 a domain with more than one vCPU up emulates (Xen 3.0's "multi-processor guests
// need to be more conservative", taken to its end), and bringing a second vCPU up reattaches
// every slot first (sched/scheduler's vcpu_up calls reattach_all).
namespace detail {
bool at_most_one_vcpu_up(const Domain& domain);
}
inline bool may_detach(const Domain& domain) {
  if (domains::vcpus_on_every_cpu()) [[unlikely]]
    return detail::at_most_one_vcpu_up(domain);
  return true;
}
namespace detail {
void reattach_both_slots(Domain& domain);
}
// Triggers: any MMU hypercall, an emulated write, a domain stopping. Inline: its callers run
// on every MMU hypercall, and most of the time nothing is detached (in emulate and hypercall
// modes never), so the test of the two slots is all they should pay.
inline void reattach_all(Domain& domain) {
  if (domain.writable_pagetables.any_in_use()) detail::reattach_both_slots(domain);
}
// A not-present fault while a table is unhooked: reattach it; true if there was one.
bool reattach_unhooked(Domain& domain);

// Held by another domain's MMU operation on `domain`'s tables or frames, from another CPU than
// the domain's: every slot is reattached when it begins, and none detached until it ends
// (ptwr::WritablePagetables::begin_foreign_use). No lock is held meanwhile.
// Null: none (the operation's own domain).
class ForeignUse {
 public:
  explicit ForeignUse(Domain* domain) : domain_(domain) {
    if (domain_ == nullptr) return;
    domain_->writable_pagetables.begin_foreign_use();
    detail::reattach_both_slots(*domain_);
  }
  ~ForeignUse() {
    if (domain_ != nullptr) domain_->writable_pagetables.end_foreign_use();
  }
  ForeignUse(const ForeignUse&) = delete;
  ForeignUse& operator=(const ForeignUse&) = delete;

 private:
  Domain* domain_;
};
}  // namespace writable_page_tables
