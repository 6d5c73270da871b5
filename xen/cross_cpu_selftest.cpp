// selftest=ipi, ipi-unlocked, lock-order and lock-recursion
// (tests/integration/smp/test_smp_ipi.py): the cross-CPU calls, the event check, the flush
// IPI and the flush clock's filter, and the spinlock exercised on every CPU at boot, each
// result a line the test checks. Tests only: nothing else calls this. It sits on the top
// floor because it uses both the CPUs' primitives (arch/x86) and the MMU's filter (mm).
#include "cross_cpu_selftest.h"
#include "arch/x86/cpu/per_cpu.h"
#include "arch/x86/cpu/spinlock.h"
#include "arch/x86/layout.h"
#include "arch/x86/platform/cross_cpu.h"
#include "arch/x86/platform/smp_boot.h"
#include "console/console.h"
#include "mm/tlb_flush_filter.h"
#include "time/clock.h"

namespace cross_cpu {
namespace {
constexpr unsigned flood_calls = 10000;
// Per CPU. Each `pause` makes QEMU's TCG leave the translated code to let another CPU run:
// under multi-threaded TCG at -smp 4 on a loaded two-core host an increment under the lock was
// measured at 2 us to 0.9 ms.
constexpr unsigned lock_rounds = 2000;
constexpr uint64_t ms = 1000000;
constexpr uint64_t wait_timeout_ns = 1000 * ms;  // host time without -icount

// The k-th CPU of a mask (k < its count).
unsigned nth(CpuMask mask, unsigned k) {
  unsigned cpu = mask.next(0);
  while (k--) cpu = mask.next(cpu + 1);
  return cpu;
}

template <typename Done>
bool wait_until(Done&& done) {
  uint64_t deadline = system_clock::now_ns() + wait_timeout_ns;
  while (!done() && system_clock::now_ns() < deadline) asm volatile("pause");
  return done();
}

// " 0 1 2" (or " none").
void print_mask(CpuMask mask) {
  if (mask.empty()) printk(" none");
  for_each_cpu(mask, [](unsigned cpu) { printk(" %u", cpu); });
}

struct Record {
  uint32_t ran_on[MAX_CPUS];  // each CPU that ran the call writes the call's token
  uint32_t token;
};
void record_cpu(void* argument) {
  Record& record = *static_cast<Record*>(argument);
  __atomic_store_n(&record.ran_on[per_cpu::this_cpu()], record.token, __ATOMIC_RELEASE);
}
CpuMask recorded(const Record& record) {
  CpuMask cpus;
  for (unsigned cpu = 0; cpu < MAX_CPUS; ++cpu)
    if (__atomic_load_n(&record.ran_on[cpu], __ATOMIC_ACQUIRE) == record.token) cpus.add(cpu);
  return cpus;
}

uint64_t calls_run[MAX_CPUS];
void count_call(void*) { __atomic_add_fetch(&calls_run[per_cpu::this_cpu()], 1, __ATOMIC_ACQ_REL); }
uint64_t calls_total() {
  uint64_t total = 0;
  for (unsigned cpu = 0; cpu < MAX_CPUS; ++cpu) total += __atomic_load_n(&calls_run[cpu], __ATOMIC_ACQUIRE);
  return total;
}

constexpr lock_order::LockClass counter_lock_class{"selftest counter", lock_order::Level::selftest};
SpinLock counter_lock(counter_lock_class);
volatile uint64_t shared_counter = 0;
bool use_counter_lock = true;  // selftest=ipi-unlocked: false, and the count must come out short
uint32_t hammer_arrived = 0, hammer_cpus = 0;
// On every CPU at once (they meet first): read, pause, write, under the lock. `pause` is where
// QEMU's TCG lets another CPU run, so without the lock the CPUs' increments overwrite each
// other: every time under -icount, in some runs with multi-threaded TCG.
void hammer(void*) {
  __atomic_add_fetch(&hammer_arrived, 1, __ATOMIC_ACQ_REL);
  wait_until([] { return __atomic_load_n(&hammer_arrived, __ATOMIC_ACQUIRE) >= hammer_cpus; });
  for (unsigned i = 0; i < lock_rounds; ++i) {
    if (use_counter_lock) counter_lock.lock();
    uint64_t value = shared_counter;
    asm volatile("pause");
    shared_counter = value + 1;
    if (use_counter_lock) counter_lock.unlock();
  }
}

void calls(CpuMask online, CpuMask others, unsigned self) {
  Record record{};
  for_each_cpu(others, [&](unsigned cpu) {
    record.token = 100 + cpu;
    on_cpus(CpuMask::only(cpu), record_cpu, &record, true);
    printk("ipi: call to CPU%u ran on", cpu);
    print_mask(recorded(record));
    printk("\n");
  });
  record.token = 1000;
  on_cpus(online, record_cpu, &record, true);
  printk("ipi: waited call to all ran on");
  print_mask(recorded(record));
  printk("\n");
  // CPUs beyond the online ones are ignored.
  record.token = 2000;
  on_cpus(CpuMask::from_bits(~uint64_t(0)), record_cpu, &record, true);
  printk("ipi: call to CPUs 0-63 ran on");
  print_mask(recorded(record));
  printk("\n");

  uint64_t before = calls_total();
  on_cpus(others, count_call, nullptr, false);
  bool ran = wait_until([&] { return calls_total() >= before + others.count(); });
  printk("ipi: non-waited call to %u CPUs: %s\n", others.count(), ran ? "all ran" : "some did not run");

  // The flood: each other CPU in turn, every fourth call all of them, waited and not.
  uint64_t start = system_clock::now_ns();
  before = calls_total();
  uint64_t expected = 0;
  for (unsigned i = 0; i < flood_calls; ++i) {
    CpuMask one = others.empty() ? CpuMask::only(self) : CpuMask::only(nth(others, i % others.count()));
    CpuMask mask = i % 4 == 3 ? online : one;
    on_cpus(mask, count_call, nullptr, i % 2 == 0);
    expected += mask.count();
  }
  wait_until([&] { return calls_total() >= before + expected; });
  printk("ipi: flood of %u calls: %lu of %lu function runs\n", flood_calls, calls_total() - before, expected);
  printk("ipi: flood: %lu ms\n", (system_clock::now_ns() - start) / ms);
}

void event_checks(CpuMask others) {
  if (others.empty()) printk("ipi: event check: no other CPU\n");
  for_each_cpu(others, [](unsigned cpu) {
    // Once it halts (its park count odd), nothing but the event check can wake it.
    bool halted = wait_until([&] { return smp_boot::park_count(cpu) % 2 == 1; });
    uint64_t before = smp_boot::park_count(cpu);
    send_event_check(CpuMask::only(cpu));
    bool woke = halted && wait_until([&] { return smp_boot::park_count(cpu) > before; });
    printk("ipi: event check: CPU%u %s\n", cpu, woke ? "woke from hlt" : halted ? "did not wake" : "never halted");
  });
}

void flushes(CpuMask online) {
  uint64_t counts[MAX_CPUS], stamps[MAX_CPUS], after[MAX_CPUS];
  for_each_cpu(online, [&](unsigned cpu) { counts[cpu] = flush_count(cpu); });
  copy_flush_stamps(stamps);
  uint64_t clock_before = flush_clock_now();
  flush_tlb_mask(online);
  copy_flush_stamps(after);
  for_each_cpu(online, [&](unsigned cpu) {
    bool flushed = flush_count(cpu) == counts[cpu] + 1 && after[cpu] > clock_before;
    printk("ipi: flush CPU%u: %s (flushes %lu, stamp %lu -> %lu)\n", cpu, flushed ? "flushed" : "NOT flushed",
           flush_count(cpu), stamps[cpu], after[cpu]);
  });

  // A frame stamped now; then one CPU flushes. The filter must leave that CPU out and keep
  // every other (their last flush was before the stamp), then none once they flushed too.
  uint64_t stamp = flush_clock_now();
  unsigned flusher = nth(online, online.count() - 1);
  flush_tlb_mask(CpuMask::only(flusher));
  copy_flush_stamps(after);
  CpuMask need = mm::cpus_needing_flush(after, MAX_CPUS, online, stamp, flush_clock_now());
  printk("ipi: flush filter: CPU%u flushed since the stamp; to flush:", flusher);
  print_mask(need);
  printk(" (expected");
  print_mask(online.without(flusher));
  printk(")\n");
  flush_tlb_mask(need);
  copy_flush_stamps(after);
  need = mm::cpus_needing_flush(after, MAX_CPUS, online, stamp, flush_clock_now());
  printk("ipi: flush filter once they flushed: to flush:");
  print_mask(need);
  printk("\n");
}

void contended_lock(CpuMask online) {
  shared_counter = 0;
  hammer_arrived = 0;
  hammer_cpus = online.count();
  uint64_t start = system_clock::now_ns();
  on_cpus(online, hammer, nullptr, true);
  uint64_t took = system_clock::now_ns() - start;
  uint64_t expected = uint64_t(online.count()) * lock_rounds;
  printk("ipi: lock: %u CPUs x %u increments = %lu (expected %lu)\n", online.count(), lock_rounds, shared_counter,
         expected);
  printk("ipi: lock: %lu ms\n", took / ms);
}
}  // namespace

void selftest(bool with_counter_lock) {
  use_counter_lock = with_counter_lock;
  CpuMask online = smp_boot::online_mask();
  unsigned self = per_cpu::this_cpu();
  CpuMask others = online.without(self);
  printk("ipi: selftest on %u CPUs, lock checks %s, counter lock %s\n", online.count(),
         spinlock::checks_enabled() ? "on" : "off", with_counter_lock ? "on" : "OFF (selftest=ipi-unlocked)");
  calls(online, others, self);
  event_checks(others);
  flushes(online);
  contended_lock(online);
  printk("ipi: selftest done\n");
}

void lock_order_selftest(bool recursion) {
  static constexpr lock_order::LockClass outer_class{"selftest outer", lock_order::Level::selftest};
  static constexpr lock_order::LockClass inner_class{"selftest inner", lock_order::Level::domain};
  static SpinLock outer(outer_class), inner(inner_class);
  SpinLock& second = recursion ? outer : inner;
  printk("lock-order: taking '%s' while holding 'selftest outer'\n", second.lock_class().name);
  LockGuard a(outer);
  LockGuard b(second);
  printk("lock-order: no violation reported\n");
}
}  // namespace cross_cpu
