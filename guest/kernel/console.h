#pragma once
// Kernel output goes to the hypervisor console (dom0: HYPERVISOR_console_io).
#include <stddef.h>

namespace kernel {

void console_write(const char* text, size_t length);
void print(const char* fmt, ...) __attribute__((format(printf, 1, 2)));

}  // namespace kernel
