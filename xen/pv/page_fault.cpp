#include "pv/page_fault.h"

namespace page_fault {
// Guest writes to its page tables are not emulated yet: every fault goes to the guest.
bool fixup(Vcpu&, TrapFrame&, uint64_t) { return false; }
}  // namespace page_fault
