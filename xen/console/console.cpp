#include "console/console.h"
#include "console/console_ring.h"
#include "console/serial.h"
#include "arch/x86/cpu/per_cpu.h"
#include "arch/x86/cpu/registers.h"
#include "common/format.h"

namespace console::detail {
LogLevel current_level = LogLevel::info;
}  // namespace console::detail

namespace {
using console::detail::current_level;
bool at_line_start = true;

// Xen's default ring size (16 KiB, the _CONRING_SIZE a one-CPU machine keeps).
constexpr uint32_t ring_size = 16384;
char ring_storage[ring_size];
constinit console::ConsoleRing ring_buffer(ring_storage, ring_size);

// Where output goes: always the serial line; the ring too for what Xen's printk prints (its
// own lines and guests' "(dN) " lines), not for dom0's console_io writes, which Xen puts in
// the ring only with console_to_ring.
enum class Sink { serial, serial_and_ring };

void put(char c, Sink sink) {
  serial::put(c);
  if (sink == Sink::serial_and_ring) ring_buffer.put(&c, 1);
}

void emit(const char* text, size_t length, bool prefixed, Sink sink) {
  for (size_t i = 0; i < length; ++i) {
    if (prefixed && at_line_start) {
      for (const char* p = "(XEN) "; *p; ++p) put(*p, sink);
    }
    put(text[i], sink);
    at_line_start = text[i] == '\n';
  }
}

void vprintk(LogLevel level, const char* fmt, va_list args) {
  if (level > current_level) return;
  char buffer[512];
  size_t n = format_to(buffer, sizeof(buffer), fmt, args);
  emit(buffer, n < sizeof(buffer) ? n : sizeof(buffer) - 1, true, Sink::serial_and_ring);
}
}  // namespace

namespace console {
void init() { serial::init(); }
void set_level(LogLevel level) { current_level = level; }
void write_raw(const char* text, size_t length) { emit(text, length, false, Sink::serial); }
ConsoleRing& ring() { return ring_buffer; }

bool write_guest_line(unsigned domain_id, const char* line) {
  char buffer[256];
  size_t n = format_to(buffer, sizeof(buffer), "(d%u) %s\n", domain_id, line);
  if (n >= sizeof(buffer)) n = sizeof(buffer) - 1;
  if (!serial::has_room(n + 1)) return false;  // the serial line sends the newline as two bytes
  emit(buffer, n, false, Sink::serial_and_ring);
  return true;
}

namespace {
StopOtherCpus stop_other_cpus;
constexpr int no_cpu = -1;
int panicking_cpu = no_cpu;
}  // namespace

void set_stop_other_cpus(StopOtherCpus stop) { stop_other_cpus = stop; }

bool another_cpu_panics() {
  int cpu = __atomic_load_n(&panicking_cpu, __ATOMIC_SEQ_CST);
  return cpu != no_cpu && cpu != int(per_cpu::this_cpu());
}

void begin_panic() {
  int expected = no_cpu, me = int(per_cpu::this_cpu());
  if (!__atomic_compare_exchange_n(&panicking_cpu, &expected, me, false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST)) {
    if (expected == me) return;  // this CPU's panic goes on (a fatal trap, then its panic line)
    cpu::halt_forever();         // another CPU's panic is being printed
  }
  if (stop_other_cpus) stop_other_cpus();
  current_level = LogLevel::all;
}

void panic(const char* fmt, ...) {
  begin_panic();
  va_list args;
  va_start(args, fmt);
  current_level = LogLevel::all;
  printk("\n****************************************\n");
  printk("Panic: ");
  vprintk(LogLevel::error, fmt, args);
  printk("\n****************************************\n");
  va_end(args);
  serial::flush();
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
