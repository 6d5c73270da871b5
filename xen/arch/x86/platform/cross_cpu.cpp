#include "arch/x86/platform/cross_cpu.h"
#include "arch/x86/cpu/flush_clock.h"
#include "arch/x86/cpu/lock_order.h"
#include "arch/x86/cpu/per_cpu.h"
#include "arch/x86/cpu/registers.h"
#include "arch/x86/cpu/spinlock.h"
#include "arch/x86/cpu/trap_frame.h"
#include "arch/x86/layout.h"
#include "arch/x86/platform/local_apic.h"
#include "arch/x86/platform/smp_boot.h"
#include "console/console.h"
#include "time/clock.h"
#include "trace/format/events.h"
#include "tracing/trace_buffers.h"

namespace cross_cpu {
namespace {
constexpr lock_order::LockClass call_lock_class{"cross-CPU call", lock_order::Level::cross_cpu_call};
SpinLock call_lock(call_lock_class);
constexpr uint64_t answer_timeout_ns = 1000 * 1000000ull;  // host time without -icount

// The one call in flight, written by its caller under the call lock. A target copies the call
// and then clears its bit in `pending` (the caller may reuse the descriptor once no bit is
// left, if it does not wait), and clears its bit in `unfinished` once the function returned
// (only if the caller waits).
struct Call {
  Function function;
  void* argument;
  bool wait;
  uint64_t pending;
  uint64_t unfinished;
};
Call call;

uint64_t load(const uint64_t& word) { return __atomic_load_n(&word, __ATOMIC_ACQUIRE); }

// The call, if this CPU is one of its targets and has not run it yet. With interrupts off: the
// call_function handler must not run it a second time in between (from the caller's loop
// below, which may run with interrupts on).
void run_pending(unsigned cpu) {
  uint64_t flags = cpu::save_and_disable_interrupts();
  uint64_t bit = uint64_t(1) << cpu;
  if (load(call.pending) & bit) {
    Function function = call.function;
    void* argument = call.argument;
    bool wait = call.wait;
    __atomic_fetch_and(&call.pending, ~bit, __ATOMIC_ACQ_REL);
    {
      trace_buffers::QuietNotifications quiet;  // a record here wakes no one (trace_buffers.h)
      function(argument);
    }
    if (wait) __atomic_fetch_and(&call.unfinished, ~bit, __ATOMIC_RELEASE);
  }
  cpu::restore_interrupts(flags);
}

void run_here(Function function, void* argument) {
  uint64_t flags = cpu::save_and_disable_interrupts();
  trace_buffers::QuietNotifications quiet;
  function(argument);
  cpu::restore_interrupts(flags);
}

// The flush clock (arch/x86/cpu/flush_clock.h) and, per CPU, its last full flush's tick and
// how many it made (each on a cache line of its own: the CPUs write them at once).
uint64_t clock = flush_clock::first;
struct alignas(64) FlushRecord {
  uint64_t stamp;
  uint64_t count;
};
FlushRecord flushes[MAX_CPUS];

uint64_t tick_clock() {
  uint64_t now = __atomic_load_n(&clock, __ATOMIC_RELAXED);
  while (!__atomic_compare_exchange_n(&clock, &now, flush_clock::next(now), true, __ATOMIC_SEQ_CST, __ATOMIC_RELAXED)) {
  }
  return flush_clock::next(now);
}

// A flush for another CPU's request: its FLUSH_IPI_RECEIVE record goes to this CPU's trace
// buffer, naming the sender (the argument) and the flush clock's tick of this flush.
void flush_function(void* sender) {
  flush_tlb_local();
  const unsigned self = per_cpu::this_cpu();
  const unsigned from = unsigned(reinterpret_cast<uintptr_t>(sender));
  if (from != self)
    trace::event(trace::events::kFlushIpiReceive, from,
                 uint32_t(__atomic_load_n(&flushes[self].stamp, __ATOMIC_RELAXED)));
}
}  // namespace

void on_cpus(CpuMask mask, Function function, void* argument, bool wait) {
  unsigned self = per_cpu::this_cpu();
  CpuMask targets = mask & smp_boot::online_mask();
  bool here = targets.contains(self);
  targets.remove(self);
  if (targets.empty()) {
    if (here) run_here(function, argument);
    return;
  }
  while (!call_lock.try_lock()) {
    run_pending(self);  // its holder may be waiting for this CPU
    asm volatile("pause");
  }
  call.function = function;
  call.argument = argument;
  call.wait = wait;
  __atomic_store_n(&call.unfinished, wait ? targets.bits() : 0, __ATOMIC_RELAXED);
  __atomic_store_n(&call.pending, targets.bits(), __ATOMIC_RELEASE);
  for_each_cpu(targets,
               [](unsigned cpu) { local_apic::send_fixed(smp_boot::apic_id_of(cpu), vectors::call_function); });
  if (here) run_here(function, argument);
  uint64_t deadline = system_clock::now_ns() + answer_timeout_ns;
  while (load(call.pending) && system_clock::now_ns() < deadline) asm volatile("pause");
  if (uint64_t silent = load(call.pending)) [[unlikely]] {
    CpuMask cpus = CpuMask::from_bits(silent);
    console::panic("CPU%u: %u CPUs did not answer a cross-CPU call within 1000 ms (the first: CPU%u)", self,
                   cpus.count(), cpus.next(0));
  }
  while (load(call.unfinished)) asm volatile("pause");
  call_lock.unlock();
}

void handle_call_interrupt() { run_pending(per_cpu::this_cpu()); }

void poll() {
  if (__atomic_load_n(&call.pending, __ATOMIC_RELAXED) != 0) run_pending(per_cpu::this_cpu());
}

void send_event_check(CpuMask mask) {
  CpuMask targets = (mask & smp_boot::online_mask()).without(per_cpu::this_cpu());
  for_each_cpu(targets, [](unsigned cpu) { local_apic::send_fixed(smp_boot::apic_id_of(cpu), vectors::event_check); });
}

void flush_tlb_local() {
  // Tick, flush, stamp, with no interrupt in between: a flush in a handler would otherwise
  // stamp a later tick that this stamp then overwrites (safe, but a wasted flush later).
  uint64_t flags = cpu::save_and_disable_interrupts();
  uint64_t tick = tick_clock();
  cpu::flush_tlb_local();
  FlushRecord& record = flushes[per_cpu::this_cpu()];
  __atomic_store_n(&record.stamp, tick, __ATOMIC_RELEASE);
  __atomic_store_n(&record.count, record.count + 1, __ATOMIC_RELEASE);
  cpu::restore_interrupts(flags);
}

void flush_tlb_mask(CpuMask mask) {
  const unsigned self = per_cpu::this_cpu();
  const CpuMask remote = (mask & smp_boot::online_mask()).without(self);
  if (!remote.empty()) trace::event(trace::events::kFlushIpiSend, uint32_t(remote.bits()), uint32_t(flush_clock_now()));
  on_cpus(mask, flush_function, reinterpret_cast<void*>(uintptr_t(self)), true);
}

uint64_t flush_clock_now() { return __atomic_load_n(&clock, __ATOMIC_SEQ_CST); }

void copy_flush_stamps(uint64_t (&stamps)[MAX_CPUS]) {
  for (unsigned cpu = 0; cpu < MAX_CPUS; ++cpu) stamps[cpu] = __atomic_load_n(&flushes[cpu].stamp, __ATOMIC_ACQUIRE);
}

uint64_t flush_count(unsigned cpu) {
  return cpu < MAX_CPUS ? __atomic_load_n(&flushes[cpu].count, __ATOMIC_ACQUIRE) : 0;
}
}  // namespace cross_cpu
