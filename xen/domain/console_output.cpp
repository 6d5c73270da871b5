#include "domain/console_output.h"
#include "console/console.h"
#include "console/serial.h"
#include "domain/domain.h"
#include "domain/timers.h"
#include "time/clock.h"

namespace console_output {
namespace {
// Dropped text and suppressed messages, in one line at most every 5 s (or at the end).
void report(Domain& domain, uint64_t now, bool at_end) {
  if (!domain.console_text_limit.dropped() && !domain.console_message_limit.dropped()) return;
  if (!at_end && !domain.console_drop_reports.take(now, 1)) return;
  if (uint64_t bytes = domain.console_text_limit.take_dropped())
    printk("d%u: %lu bytes of console output dropped\n", domain.id, bytes);
  if (uint64_t messages = domain.console_message_limit.take_dropped())
    printk("d%u: %lu console messages suppressed\n", domain.id, messages);
}
}  // namespace

void print_line(Domain& domain, const char* line, size_t length) {
  uint64_t now = system_clock::now_ns();
  uint64_t bytes = length + 1;  // and its newline
  if (!domain.console_text_limit.take(now, bytes)) return;
  report(domain, now, false);
  if (!console::write_guest_line(domain.id, line)) domain.console_text_limit.drop(bytes);
}

bool may_report(Domain& domain) {
  uint64_t now = system_clock::now_ns();
  if (!domain.console_message_limit.take(now, 1)) return false;
  report(domain, now, false);
  return true;
}

void keep_draining() {
  if (serial::pending()) timers::reprogram();
}

void report_dropped(Domain& domain) { report(domain, system_clock::now_ns(), true); }
}  // namespace console_output
