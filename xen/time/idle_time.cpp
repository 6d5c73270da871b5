#include "time/idle_time.h"

namespace idle_time {
namespace {
IdleClock clocks[max_cpus];

template <typename T>
T load(const T& value) {
  return __atomic_load_n(&value, __ATOMIC_ACQUIRE);
}
template <typename T>
void store(T& place, T value) {
  __atomic_store_n(&place, value, __ATOMIC_RELEASE);
}
}  // namespace

void IdleClock::enter(uint64_t now_ns) {
  if (idle_) return;
  store(sequence_, sequence_ + 1);
  store(since_ns_, now_ns);
  store(idle_, true);
  store(sequence_, sequence_ + 1);
}

void IdleClock::leave(uint64_t now_ns) {
  if (!idle_) return;
  store(sequence_, sequence_ + 1);
  if (now_ns > since_ns_) store(finished_ns_, finished_ns_ + (now_ns - since_ns_));
  store(idle_, false);
  store(sequence_, sequence_ + 1);
}

uint64_t IdleClock::total_ns(uint64_t now_ns) const {
  for (;;) {
    uint64_t before = load(sequence_);
    if (before & 1) continue;
    uint64_t total = load(finished_ns_);
    if (load(idle_) && now_ns > load(since_ns_)) total += now_ns - load(since_ns_);
    if (load(sequence_) == before) return total;
  }
}

void enter(unsigned cpu, uint64_t now_ns) {
  if (cpu < max_cpus) clocks[cpu].enter(now_ns);
}
void leave(unsigned cpu, uint64_t now_ns) {
  if (cpu < max_cpus) clocks[cpu].leave(now_ns);
}
uint64_t total_ns(unsigned cpu, uint64_t now_ns) { return cpu < max_cpus ? clocks[cpu].total_ns(now_ns) : 0; }
}  // namespace idle_time
