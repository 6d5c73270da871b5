// selftest=fault: without a page-fault handler, a fault must crash the domain (the
// hypervisor has nowhere to bounce it). Nothing after the faulting access may run.
#include "pv-kernel-patches/traps.h"
#include "kernel/console/console.h"
#include "selftest/cpu/cpu_selftests.h"

namespace kernel {

void selftest_fault(SelfTest& test) {
  print("selftest fault: removing every trap handler, then touching an unmapped address\n");
  pv::traps_remove_all();
  volatile uint64_t* unmapped = reinterpret_cast<volatile uint64_t*>(0x0000000010000000ull);
  uint64_t value = *unmapped;
  test.check("still running after an unhandled page fault", static_cast<long>(value), -1);
}

}  // namespace kernel
