// Pure: a rate limit on what a domain makes the console print, a token bucket as Xen's
// printk_ratelimit: a burst allowed at once, then a steady rate; what is refused is counted,
// and the count is taken once, to be reported as one line when output flows again.
//
// The credit is kept as time (ns), as Xen keeps it in ms: each unit (a byte, or a message)
// costs `ns_per_unit`, and the credit never exceeds the cost of a burst. A limit starts full.
// `now_ns` must not go backwards (the system clock does not); a smaller value earns nothing.
#pragma once
#include <stdint.h>

namespace console {
class OutputLimit {
 public:
  constexpr OutputLimit(uint64_t burst, uint64_t ns_per_unit)
      : cost_ns_(ns_per_unit), ceiling_ns_(burst * ns_per_unit), credit_ns_(ceiling_ns_) {}

  // Whether `units` may be printed at `now_ns`; if not, they are counted as dropped.
  bool take(uint64_t now_ns, uint64_t units);
  // Counts units refused elsewhere (the serial line had no room for them).
  void drop(uint64_t units) { dropped_ += units; }
  uint64_t dropped() const { return dropped_; }  // since the last take_dropped
  // The units dropped since the last call, and zero from now on.
  uint64_t take_dropped();

 private:
  uint64_t cost_ns_, ceiling_ns_, credit_ns_;
  uint64_t last_ns_ = 0;
  uint64_t dropped_ = 0;
};

// A domU's console text (bytes): 64 KiB at once, then 8 KiB/s. The steady rate is below what
// the serial line carries at 115200 baud (11.5 KB/s) so one domain cannot fill it alone; the
// burst holds a whole Linux boot log, so a domain that is not flooding loses nothing.
constexpr uint64_t guest_text_burst = 64 * 1024, guest_text_ns_per_byte = 1000000000ull / (8 * 1024);
// The hypervisor's own lines about a domain's console that the domain can provoke (an
// inconsistent ring, ...): Xen's printk_ratelimit numbers, 10 at once, then one every 5 s.
// The line that reports dropped text or suppressed messages comes at most once per 5 s.
constexpr uint64_t guest_message_burst = 10, guest_message_ns_apart = 5000000000ull;
}  // namespace console
