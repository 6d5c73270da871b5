#include "kernel/console/panic.h"

#include <stdarg.h>

#include "arch/xen.h"
#include "kernel/console/console.h"
#include "common/format.h"

namespace kernel {

void panic(const char* fmt, ...) {
  char buffer[256];
  va_list args;
  va_start(args, fmt);
  format_to(buffer, sizeof(buffer), fmt, args);
  va_end(args);
  print("kernel panic: %s\n", buffer);
  xen::shutdown(SHUTDOWN_crash);
}

}  // namespace kernel
