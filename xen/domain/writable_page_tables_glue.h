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
// Detaches the table; false when the write must be emulated instead.
bool detach(Vcpu& vcpu, const TableWriteFault& write);
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
}  // namespace writable_page_tables
