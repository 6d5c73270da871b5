// Pure: MMUEXT_SET_LDT's arguments, as Xen 4.17's do_mmuext_op checks them: at most 8192
// entries (a 64 KiB LDT) and, for a non-empty LDT, a page-aligned linear address Xen's
// __addr_ok accepts (the lower half, or above the hypervisor's range: only the start is
// checked). An empty LDT ignores the address. Xen then maps the LDT's pages lazily, on the
// first fault on an LDT selector, typing each as a descriptor page; here the LDT is recorded
// (and reported by getvcpucontext) but never loaded: the hardware LDT stays null, so a guest
// that uses an LDT selector gets #GP where Xen would map its page (Linux uses an LDT only
// for modify_ldt; its boot sets an empty one).
#pragma once
#include <stdint.h>

namespace ldt_rules {
inline constexpr uint32_t kMaxEntries = 8192;

struct Ldt {
  uint64_t base = 0;
  uint32_t entries = 0;
  bool operator==(const Ldt&) const = default;
};

// 0 with `ldt` set, or -EINVAL with `ldt` unchanged.
long set_ldt(Ldt& ldt, uint64_t linear_address, uint32_t entries);
}  // namespace ldt_rules
