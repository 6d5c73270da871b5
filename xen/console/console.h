// The hypervisor console: formatted, levelled output on COM1, prefixed "(XEN) " like Xen's,
// and kept in the console ring that XEN_SYSCTL_readconsole reads (console/console_ring.h).
#pragma once
#include <stdarg.h>
#include <stddef.h>

enum class LogLevel { none = 0, error = 1, warning = 2, info = 3, debug = 4, all = 5 };

namespace console {
void init();
void set_level(LogLevel level);
void write_raw(const char* text, size_t length);  // guest console_io output: no prefix
// One line of an unprivileged guest's console output, prefixed "(dN) " instead of "(XEN) "
// as Xen's guest_printk does. A guest never waits for the serial line: false (nothing printed)
// when the line does not fit in its transmit ring now.
bool write_guest_line(unsigned domain_id, const char* line);
class ConsoleRing;
ConsoleRing& ring();  // every printk line and every "(dN) " line, as Xen's conring
[[noreturn]] void panic(const char* fmt, ...) __attribute__((format(printf, 1, 2)));
// The start of a panic, before anything is printed (panic and the fatal-trap report call it):
// the first CPU to get here stops the others and goes on; any other CPU halts here silently,
// so a panic is printed once, by one CPU. Output is then unfiltered.
void begin_panic();
// How the others are stopped: the halt IPI, which platform/smp_boot installs once APs run.
using StopOtherCpus = void (*)();
void set_stop_other_cpus(StopOtherCpus stop);
// Another CPU is printing its panic (an NMI then means: stop).
bool another_cpu_panics();

namespace detail {
extern LogLevel current_level;
}
// Whether a line of `level` is printed. Inline, so a debug line on a hot path (a writable-
// pagetable detach and reattach log one each) costs a load and a branch while debug output is
// off, not a variadic call that spills its arguments.
inline bool prints(LogLevel level) { return level <= detail::current_level; }
}  // namespace console

void printk(const char* fmt, ...) __attribute__((format(printf, 1, 2)));
void printk_level(LogLevel level, const char* fmt, ...) __attribute__((format(printf, 2, 3)));
#define log_debug(...) (console::prints(LogLevel::debug) ? printk_level(LogLevel::debug, __VA_ARGS__) : void())
#define log_warning(...) printk_level(LogLevel::warning, __VA_ARGS__)
