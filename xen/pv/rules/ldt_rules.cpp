#include "pv/rules/ldt_rules.h"
#include "abi/xen_abi.h"
#include "pv/rules/guest_address.h"

namespace ldt_rules {
namespace {}  // namespace

long set_ldt(Ldt& ldt, uint64_t linear_address, uint32_t entries) {
  if (entries > kMaxEntries) return -XEN_EINVAL;
  if (entries != 0 && ((linear_address & 0xfff) || !guest_address::addr_ok(linear_address))) return -XEN_EINVAL;
  ldt = Ldt{entries != 0 ? linear_address : 0, entries};  // empty: base 0, as getvcpucontext reports it
  return 0;
}
}  // namespace ldt_rules
