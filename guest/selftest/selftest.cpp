#include "selftest/selftest.h"

#include "kernel/console/console.h"

namespace kernel {

void SelfTest::check(const char* what, long got, long expected) {
  if (got == expected) {
    print("selftest %s: %s: ok\n", name_, what);
    return;
  }
  ++failures_;
  print("selftest %s: %s: FAIL (got %ld expected %ld)\n", name_, what, got, expected);
}

void SelfTest::note(const char* what, long value) {
  print("selftest %s: %s: %ld (0x%lx)\n", name_, what, value, value);
}

bool SelfTest::finish() {
  print("selftest %s: %s\n", name_, failures_ == 0 ? "passed" : "failed");
  return failures_ == 0;
}

}  // namespace kernel
