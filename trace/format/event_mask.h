// Whether the trace event mask (XEN_SYSCTL_TBUFOP_set_evt_mask) admits an event, by Xen's
// three tests: any common bit, then a common class bit (bits 27:16), then a common subclass
// bit (bits 15:12). Freestanding: the hypervisor uses it for every record.
#pragma once
#include <stdint.h>
#include <xen/trace.h>

namespace trace {

constexpr bool event_mask_admits(uint32_t mask, uint32_t event) {
  if ((mask & event) == 0) return false;
  if (((mask >> TRC_CLS_SHIFT) & (event >> TRC_CLS_SHIFT)) == 0) return false;
  return (((mask >> TRC_SUBCLS_SHIFT) & 0xf) & ((event >> TRC_SUBCLS_SHIFT) & 0xf)) != 0;
}

}  // namespace trace
