#include "pv/ldt_rules.h"
#include "mm/xen_abi.h"

namespace ldt_rules {
namespace {
// Xen's __addr_ok for a 64-bit PV guest: not inside the hypervisor's virtual range.
bool address_ok(uint64_t address) { return address < (1ull << 47) || address >= 0xffff880000000000ull; }
}  // namespace

long set_ldt(Ldt& ldt, uint64_t linear_address, uint32_t entries) {
  if (entries > kMaxEntries) return -XEN_EINVAL;
  if (entries != 0 && ((linear_address & 0xfff) || !address_ok(linear_address))) return -XEN_EINVAL;
  ldt = Ldt{entries != 0 ? linear_address : 0, entries};  // empty: base 0, as getvcpucontext reports it
  return 0;
}
}  // namespace ldt_rules
