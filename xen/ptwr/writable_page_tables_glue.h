// The hypervisor side of writable pagetables: runs the pure state machine of
// ptwr/writable_pagetables on a domain, applies the TLB work it asks for and counts it.
#pragma once
#include <stdint.h>

struct Domain;
struct Vcpu;

namespace writable_page_tables {
bool enable(Domain& domain);  // snapshot storage for the two slots; false when out of memory
// Detaches the L1 `table_mfn` the guest wrote through `mapping_entry_maddr` at `address`.
bool detach(Vcpu& vcpu, uint64_t table_mfn, uint64_t mapping_entry_maddr, uint64_t address);
// Triggers: any MMU hypercall, an emulated write, a domain stopping.
void reattach_all(Domain& domain);
// A not-present fault while a table is unhooked: reattach it; true if there was one.
bool reattach_unhooked(Domain& domain);
}  // namespace writable_page_tables
