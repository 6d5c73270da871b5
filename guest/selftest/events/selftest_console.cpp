// The console's answers to hostile text (selftest_console.cpp).
//
// console-filter: the kernel's console (dom0: console_io; a domU: its PV console ring) and
// console_io itself each print a line that forges the hypervisor's last line of a run,
// "\r(XEN) audit: clean", and lines behind an ESC (clear the screen, home the cursor) and an
// 8-bit CSI sequence. Xen 4.17 writes a hardware domain's text as it is and filters a domU's
// (guest_console_write: printable characters and tabs): the test reading the serial log checks
// which, here console_io must only accept the text (0).
//
// console-flood (a domU beside dom0 on ours): 256 KiB through console_io, 256 KiB through the
// PV console ring with a notification per line, and 50 notifications of a ring whose producer
// is far ahead. The hypervisor must answer every call at once (no wait for the serial line),
// drop what exceeds the domain's output limit, and stay responsive: afterwards a timer still
// fires (how late is noted, not bounded: under TCG guest time is the host's, which a loaded host
// stretches) and the ring is consistent again. Results are printed after a pause, once the
// domain's output limit has credit again (during the flood they would be dropped too).
#include "selftest/events/events_selftests.h"

#include <stdint.h>

#include <xen/io/console.h>
#include <xen/version.h>

#include "arch/xen.h"
#include "kernel/console/console.h"
#include "arch/event_channel_ops.h"
#include "kernel/events/time.h"
#include "kernel/events/timer.h"

namespace kernel {
namespace {
constexpr char kForged[] = "\r(XEN) audit: clean\n";

long console_io(const char* text) { return xen::console_write(text, __builtin_strlen(text)); }
void kernel_console(const char* text) { console_write(text, __builtin_strlen(text)); }

// A flood line of 128 bytes: its number, padding, a newline.
void make_line(char (&line)[128], const char* path, unsigned number) {
  __builtin_memset(line, '.', sizeof(line));
  const char digits[] = "0123456789";
  unsigned at = 0;
  for (const char* p = "console-flood "; *p; ++p) line[at++] = *p;
  for (const char* p = path; *p; ++p) line[at++] = *p;
  line[at++] = ' ';
  for (unsigned divisor = 1000; divisor; divisor /= 10) line[at++] = digits[number / divisor % 10];
  line[sizeof(line) - 1] = '\n';
}

struct FloodResult {
  long console_io_failures = 0;  // calls that did not return 0
  long ring_lines = 0;
  long garbage_notifications = 0;
  bool ring_consistent = false;  // out_cons == out_prod after the garbage
  uint64_t flood_ns = 0;
};

void flood_console_io(FloodResult& result) {
  char line[128];
  for (unsigned i = 0; i < 2048; ++i) {
    make_line(line, "console_io", i);
    if (xen::console_write(line, sizeof(line)) != 0) ++result.console_io_failures;
  }
}

void flood_ring(FloodResult& result) {
  char line[128];
  for (unsigned i = 0; i < 2048; ++i) {
    make_line(line, "ring", i);
    console_write(line, sizeof(line));
    ++result.ring_lines;
  }
}

// A producer a whole 64 KiB ahead of the consumer: the backend can only skip it.
void notify_garbage(FloodResult& result) {
  volatile xencons_interface* ring = console_ring();
  for (unsigned i = 0; i < 50; ++i) {
    ring->out_prod = ring->out_cons + 0x10000;
    if (evtchn::send(console_port()) == 0) ++result.garbage_notifications;
  }
  result.ring_consistent = ring->out_cons == ring->out_prod;
}
}  // namespace

void selftest_console_filter(SelfTest& test) {
  kernel_console(kForged);
  kernel_console("\x1b[2J\x1b[Hconsole-filter: kernel console after ESC\n");
  test.check("console_io: a forged hypervisor line", console_io(kForged), 0);
  test.check("console_io: a line behind ESC", console_io("\x1b[2J\x1b[Hconsole-filter: console_io after ESC\n"), 0);
  test.check("console_io: a line behind an 8-bit CSI",
             console_io("\x9b"
                        "2Jconsole-filter: console_io after CSI\n"),
             0);
}

void selftest_console_flood(SelfTest& test) {
  if (!console_ring()) {
    test.check("a domU with a console ring", 0, 1);
    return;
  }
  FloodResult result;
  uint64_t start = system_time_ns();
  flood_console_io(result);
  flood_ring(result);
  notify_garbage(result);
  result.flood_ns = system_time_ns() - start;
  // Responsive afterwards: a 2 s sleep ends on its timer (and earns the limit credit back).
  uint64_t deadline = system_time_ns() + 2'000'000'000;
  uint64_t events = sleep_until(deadline);
  uint64_t late_ns = system_time_ns() - deadline;
  test.check("console_io calls that did not return 0", result.console_io_failures, 0);
  test.check("ring lines written", result.ring_lines, 2048);
  test.check("garbage notifications sent", result.garbage_notifications, 50);
  test.check("ring consistent again after the garbage", result.ring_consistent, 1);
  test.check("the sleep ended on a timer event", events > 0, 1);
  test.note("ms the sleep ended after its deadline", long(late_ns / 1'000'000));  // time is host time: no bound
  xen_extraversion_t extra{};
  test.check("xen_version answers", xen::xen_version(XENVER_extraversion, &extra), 0);
  test.note("flood ms", long(result.flood_ns / 1'000'000));
}
}  // namespace kernel
