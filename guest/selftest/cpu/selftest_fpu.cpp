// selftest=fpu: the x87/SSE state is the vCPU's own. SSE registers, MXCSR and the x87
// control word are set to values of this domain's, then checked after sleeping, several
// times: when another domain runs the same test meanwhile (tests/integration/domains/
// test_domu_isolation.py), a hypervisor that did not switch FPU state would show it the other
// domain's values. The kernel is built without SSE, so nothing else here touches them.
#include <stdint.h>

#include "kernel/boot/boot_info.h"
#include "selftest/cpu/cpu_selftests.h"
#include "kernel/events/time.h"
#include "kernel/events/timer.h"

namespace kernel {
namespace {
constexpr unsigned kRounds = 8;
constexpr uint64_t kSleepNs = 20'000'000;

struct FpuMarks {
  alignas(16) uint64_t xmm7[2];
  alignas(16) uint64_t xmm15[2];
  uint32_t mxcsr;
  uint16_t x87_control;
};

// Different in every domain: built from our first machine frame; the rounding modes (bits
// no program here asks for) from whether we are privileged.
FpuMarks marks_of_this_domain(unsigned round) {
  uint64_t seed = boot_info.p2m[0] * 0x9e3779b97f4a7c15ull + round;
  bool privileged = boot_info.start_info->flags & SIF_PRIVILEGED;
  return FpuMarks{{seed, ~seed},
                  {seed ^ 0x5555aaaa5555aaaaull, seed + 1},
                  privileged ? 0x7f80u : 0x3f80u,                        // round toward zero / down
                  static_cast<uint16_t>(privileged ? 0x0f7f : 0x077f)};  // the same for x87
}

void load(const FpuMarks& marks) {
  asm volatile("movdqa %0, %%xmm7\n movdqa %1, %%xmm15\n ldmxcsr %2\n fldcw %3" ::"m"(marks.xmm7), "m"(marks.xmm15),
               "m"(marks.mxcsr), "m"(marks.x87_control));
}

FpuMarks read() {
  FpuMarks marks{};
  asm volatile("movdqa %%xmm7, %0\n movdqa %%xmm15, %1\n stmxcsr %2\n fnstcw %3"
               : "=m"(marks.xmm7), "=m"(marks.xmm15), "=m"(marks.mxcsr), "=m"(marks.x87_control));
  return marks;
}

bool same(const uint64_t (&a)[2], const uint64_t (&b)[2]) { return a[0] == b[0] && a[1] == b[1]; }
}  // namespace

void selftest_fpu(SelfTest& test) {
  unsigned kept_xmm = 0, kept_control = 0;
  for (unsigned round = 0; round < kRounds; ++round) {
    FpuMarks marks = marks_of_this_domain(round);
    load(marks);
    sleep_until(system_time_ns() + kSleepNs);
    FpuMarks after = read();
    kept_xmm += same(after.xmm7, marks.xmm7) && same(after.xmm15, marks.xmm15);
    kept_control += after.mxcsr == marks.mxcsr && after.x87_control == marks.x87_control;
  }
  load(FpuMarks{{0, 0}, {0, 0}, 0x1f80, 0x037f});  // back to the defaults
  test.check("xmm7 and xmm15 kept across sleeps", kept_xmm, kRounds);
  test.check("MXCSR and the x87 control word kept across sleeps", kept_control, kRounds);
}

}  // namespace kernel
