#include "console/console.h"
#include "console/serial.h"
#include "arch/x86/cpu/registers.h"
#include "common/format.h"

namespace {
LogLevel current_level = LogLevel::info;
bool at_line_start = true;

void emit(const char* text, size_t length, bool prefixed) {
  for (size_t i = 0; i < length; ++i) {
    if (prefixed && at_line_start) {
      for (const char* p = "(XEN) "; *p; ++p) serial::put(*p);
    }
    serial::put(text[i]);
    at_line_start = text[i] == '\n';
  }
}

void vprintk(LogLevel level, const char* fmt, va_list args) {
  if (level > current_level) return;
  char buffer[512];
  size_t n = format_to(buffer, sizeof(buffer), fmt, args);
  emit(buffer, n < sizeof(buffer) ? n : sizeof(buffer) - 1, true);
}
}  // namespace

namespace console {
void init() { serial::init(); }
void set_level(LogLevel level) { current_level = level; }
void write_raw(const char* text, size_t length) { emit(text, length, false); }

void write_guest_line(unsigned domain_id, const char* line) {
  char buffer[256];
  size_t n = format_to(buffer, sizeof(buffer), "(d%u) %s\n", domain_id, line);
  emit(buffer, n < sizeof(buffer) ? n : sizeof(buffer) - 1, false);
}

void panic(const char* fmt, ...) {
  va_list args;
  va_start(args, fmt);
  current_level = LogLevel::all;
  printk("\n****************************************\n");
  printk("Panic: ");
  vprintk(LogLevel::error, fmt, args);
  printk("\n****************************************\n");
  va_end(args);
  cpu::halt_forever();
}
}  // namespace console

void printk(const char* fmt, ...) {
  va_list args;
  va_start(args, fmt);
  vprintk(LogLevel::info, fmt, args);
  va_end(args);
}

void printk_level(LogLevel level, const char* fmt, ...) {
  va_list args;
  va_start(args, fmt);
  vprintk(level, fmt, args);
  va_end(args);
}
