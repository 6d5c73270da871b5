#pragma once
// The self-tests' harness. ABI self-tests are selected with selftest=<name> on the kernel
// command line (selftest/runner/); each check prints "selftest <name>: <check>: ok" or
// "... FAIL (got X expected Y)"; the run ends with "selftest <name>: passed" or "failed".
// Expected values are what Xen 4.17 does: that is the specification our hypervisor must match.
#include <stdint.h>

namespace kernel {

class SelfTest {
 public:
  explicit SelfTest(const char* name) : name_(name) {}
  // Compares a result (usually a hypercall return value) with the expected one.
  void check(const char* what, long got, long expected);
  void note(const char* what, long value);  // informational, never fails
  bool finish();

 private:
  const char* name_;
  int failures_ = 0;
};

}  // namespace kernel
