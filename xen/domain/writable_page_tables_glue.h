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
// Detaches the table; false when the write must be emulated instead. In a domain whose vCPUs
// may run on several CPUs (on_several_cpus) only a table no vCPU's base pointers reach, with
// the other CPUs flushed where they may still hold a way to it (ptwr::SharedView).
bool detach(Vcpu& vcpu, const TableWriteFault& write);
// Whether vCPUs of the domain may run on several CPUs at once: sched_smp=1 and a second vCPU
// of it was given a context (Domain::several_vcpus: never cleared, so no vCPU going down or
// coming up again changes the rules under a detached table; the context is set inside a
// counted MmuOperation, which reattaches what a one-CPU detach left). Then the slots stay the
// domain's, under its slots lock; detaches are inactive ones only, checked against every
// vCPU's base pointers, and none while an MMU operation of its vCPUs runs (MmuOperation,
// counted where counts_mmu_operations); reattach flushes the other CPUs before it compares
// (docs/architecture.md, "Writable pagetables on SMP").
inline bool on_several_cpus(const Domain& domain) {
  return domains::vcpus_on_every_cpu() && __atomic_load_n(&domain.several_vcpus, __ATOMIC_ACQUIRE);
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

// Whether the MMU operations of the domain's own vCPUs are counted (MmuOperation):
// sched_smp=1 and more than one vCPU (max_vcpus, fixed at creation). Wider than
// on_several_cpus, and fixed, so that no operation that began uncounted runs on when a second
// vCPU's context puts the domain on several CPUs.
inline bool counts_mmu_operations(const Domain& domain) {
  return domains::vcpus_on_every_cpu() && domain.max_vcpus > 1;
}

// Held by every MMU operation of a vCPU on its own domain's tables (the MMU hypercalls, an
// emulated table write, a vCPU's context set or reset): the detached tables are reattached
// first. Where counts_mmu_operations the operation also counts as a foreign use while it runs
// (ptwr::WritablePagetables::begin_foreign_use: no detach meanwhile) and takes the slots lock
// for its reattach whatever in_use says: either the detach's section (which reads the count
// under the lock) comes first and the reattach undoes it, or the count is seen. Without it a
// vCPU could link, pin or load as base a table another vCPU detached after the operation's
// reattach. Costs such a domain two atomic adds and the slots lock per operation; the others,
// one test (run_mmu_operation keeps even the destructor off their path).
class MmuOperation {
 public:
  explicit MmuOperation(Domain& domain) : domain_(counts_mmu_operations(domain) ? &domain : nullptr) {
    if (domain_ == nullptr) [[likely]] {
      reattach_all(domain);
      return;
    }
    domain_->writable_pagetables.begin_foreign_use();
    detail::reattach_both_slots(*domain_);
  }
  ~MmuOperation() {
    if (domain_ != nullptr) [[unlikely]]
      domain_->writable_pagetables.end_foreign_use();
  }
  MmuOperation(const MmuOperation&) = delete;
  MmuOperation& operator=(const MmuOperation&) = delete;

 private:
  Domain* domain_;
};
namespace detail {
template <typename Operation>
[[gnu::noinline]] auto run_counted(Domain& domain, Operation& operation) {
  MmuOperation counted(domain);
  return operation();
}
}  // namespace detail
// `operation()` as an MmuOperation of `domain`, for the hot paths (the MMU hypercalls, the
// emulated write): an uncounted domain pays the test and reattach_all, and its call stays a
// tail call.
template <typename Operation>
[[gnu::always_inline]] inline auto run_mmu_operation(Domain& domain, Operation operation) {
  if (counts_mmu_operations(domain)) [[unlikely]]
    return detail::run_counted(domain, operation);
  reattach_all(domain);
  return operation();
}

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
