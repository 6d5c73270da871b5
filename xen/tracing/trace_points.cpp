#include "tracing/trace_points.h"
#include "arch/x86/cpu/registers.h"
#include "console/console.h"
#include "tracing/patch_site.h"

extern "C" const trace_points::Site __trace_points_start[], __trace_points_end[];

namespace trace_points {
unsigned switch_all(bool on) {
  unsigned count = 0;
  for (const Site* site = __trace_points_start; site < __trace_points_end; ++site, ++count) {
    SiteBytes bytes = nop_bytes();
    if (on && !jump_bytes(site->address, site->target, bytes)) {
      printk("trace: site %lx cannot reach %lx, left off\n", site->address, site->target);
      continue;
    }
    // The image is mapped writable. No other CPU runs meanwhile: tracing/control holds every
    // other online CPU in a cross-CPU call, interrupts off, while this runs.
    auto* code = reinterpret_cast<volatile uint8_t*>(site->address);
    for (unsigned i = 0; i < site_bytes; ++i) code[i] = bytes.bytes[i];
  }
  cpu::cpuid(0);  // serialising: the patched bytes are what the CPU fetches next
  return count;
}
}  // namespace trace_points
