#pragma once
// Fatal kernel errors: report and ask the hypervisor to crash the domain.

namespace kernel {

[[noreturn]] void panic(const char* fmt, ...) __attribute__((format(printf, 1, 2)));

}  // namespace kernel
