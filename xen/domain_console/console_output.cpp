#include "domain_console/console_output.h"
#include "console/console.h"
#include "console/guest_text_filter.h"
#include "console/serial.h"
#include "domain/domain.h"
#include "sched/timers.h"
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

// Appends filtered guest text to the domain's line; a newline (or a full line) prints it.
void append_to_line(Domain& domain, const char* text, size_t length) {
  for (size_t i = 0; i < length; ++i) {
    bool newline = text[i] == '\n';
    if (!newline) domain.console_line[domain.console_line_length++] = text[i];
    if (newline || domain.console_line_length == Domain::console_line_capacity) {
      domain.console_line[domain.console_line_length] = 0;
      print_line(domain, domain.console_line, domain.console_line_length);
      domain.console_line_length = 0;
    }
  }
}

// What Xen's guest_console_write keeps of a domU's text (printable characters, tabs, line
// ends) goes into its lines.
void write_prefixed(Domain& domain, const char* text, uint64_t length) {
  char kept[128];
  for (uint64_t done = 0; done < length;) {
    size_t n = length - done < sizeof(kept) ? size_t(length - done) : sizeof(kept);
    append_to_line(domain, kept, console::filter_guest_text(text + done, n, kept));
    done += n;
  }
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

void write_guest_text(Domain& domain, const char* text, uint64_t length) {
  if (domain.privileged)
    console::write_raw(text, length);
  else
    write_prefixed(domain, text, length);
}

void report_dropped(Domain& domain) { report(domain, system_clock::now_ns(), true); }
}  // namespace console_output
