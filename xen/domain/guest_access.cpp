#include "domain/guest_access.h"
#include "domain/domain.h"
#include "domain/writable_page_tables_glue.h"

namespace guest_access {
namespace {
struct Fixup {
  uint64_t instruction;  // an access of guest memory that may fault
  uint64_t resume;       // where it continues if it does
};

extern "C" const Fixup __guest_access_fixups_start[], __guest_access_fixups_end[];

constexpr uint64_t error_present = 1;

const Fixup* find(uint64_t rip) {
  for (const Fixup* f = __guest_access_fixups_start; f != __guest_access_fixups_end; ++f)
    if (f->instruction == rip) return f;
  return nullptr;
}

// The writable-pagetable path made the L2 slot of a detached table not present: a guest
// touching that range reattaches it on its fault (pv/page_fault), and so does the hypervisor
// touching it on the guest's behalf. Nothing else is reattached from here: MMU operations
// reattach everything before they run, so no access inside one finds an unhooked table.
bool reattach_for(const TrapFrame& frame) {
  if (frame.vector != vectors::page_fault || (frame.error_code & error_present)) return false;
  Vcpu* vcpu = domains::current();
  return vcpu && writable_page_tables::reattach_unhooked(*vcpu->domain);
}
}  // namespace

bool fixup(TrapFrame& frame) {
  const Fixup* entry = find(frame.rip);
  if (!entry) return false;
  if (!reattach_for(frame)) frame.rip = entry->resume;  // else: retry the access
  return true;
}
}  // namespace guest_access
