#include "domain/runstate_area.h"
#include "sched/scheduler.h"
#include "abi/xen_abi.h"
#include <xen/trace.h>
#include <xen/vcpu.h>
#include "arch/x86/cpu/registers.h"
#include "sched/context_switch.h"
#include "domain/domain.h"
#include "sched/run_queue.h"
#include "sched/schedule_check.h"
#include "sched/timers.h"
#include "perf/perf_counters.h"
#include "memory/boot_memory.h"
#include "console/console.h"
#include "console/serial.h"
#include "domain/writable_page_tables_glue.h"
#include "time/clock.h"
#include "time/idle_time.h"
#include "trace/format/events.h"
#include "tracing/trace_buffers.h"
#include "arch/x86/cpu/per_cpu.h"
#include "arch/x86/platform/cross_cpu.h"
#include "arch/x86/platform/smp_boot.h"
#include "sched/hypervisor_lock.h"
#include "sched/placement.h"

namespace scheduler {
namespace {
// Each CPU's own scheduling state, written only by that CPU under the hypervisor lock (with
// sched_smp=0 only CPU 0's is used).
struct CpuState {
  Runstate idle_runstate{RUNSTATE_running, 0};  // its idle vCPU's (d32767v<cpu>)
  bool slice_ended = false;
  uint64_t slice_end_ns = 0;
};
CpuState cpu_states[MAX_CPUS];
CpuState& here() { return cpu_states[domains::scheduling_cpu()]; }
// Set at boot, read-only after.
DomainStopped domain_stopped;
NoDomainLeft no_domain_left;

bool smp() { return domains::vcpus_on_every_cpu(); }

// Trace records name a vCPU as domain and vcpu id, as Xen's; the idle vCPU of CPU n is d32767vn.
struct VcpuName {
  uint32_t domain, vcpu;
};
VcpuName name_of(const Vcpu* vcpu) {
  return vcpu ? VcpuName{vcpu->domain->id, vcpu->id} : VcpuName{DOMID_IDLE, per_cpu::this_cpu()};
}
Runstate& runstate_of(Vcpu* vcpu) { return vcpu ? vcpu->runstate : here().idle_runstate; }

// TRC_SCHED_RUNSTATE_CHANGE: old and new state in the event number, one word vcpu | domain << 16.
void change_runstate(Vcpu* vcpu, unsigned to, uint64_t now) {
  Runstate& runstate = runstate_of(vcpu);
  if (runstate.state == to) return;
  VcpuName name = name_of(vcpu);
  trace::event(trace::events::sched_runstate_change(runstate.state, to), name.vcpu | (name.domain << 16));
  runstate.time_ns[runstate.state] += now - runstate.entry_ns;
  runstate.state = to;
  runstate.entry_ns = now;
}

// Up: it has a context and is online (Xen: is_initialised and not VPF_down). A domain
// created at run time has neither until the toolstack sets its vCPU context.
bool up(const Vcpu& vcpu) { return vcpu.initialised && vcpu.online; }

bool runnable(const Vcpu& vcpu) { return vcpu.domain->alive() && up(vcpu) && !vcpu.blocked && !vcpu.domain->paused(); }

// A vCPU's place in the round robin: its domain's slot (not its id: ids are sparse), then its id.
int place_of(const Vcpu* vcpu) {
  return vcpu ? run_queue::place(vcpu->domain->slot, Domain::vcpu_capacity, vcpu->id) : run_queue::none;
}

// --- Placement (sched_smp=1; sched/placement has the rules) ---
// A vCPU that runs, runs on its processor: it is on a CPU when that CPU's current is it.
bool running_now(const Vcpu& vcpu) { return domains::running_on(vcpu.processor) == &vcpu; }

// Each CPU's load as placement counts it: its waiting vCPUs, and whether a vCPU runs there.
// `placing`, the vCPU being placed, is not counted.
void count_loads(placement::CpuLoad (&loads)[MAX_CPUS], const Vcpu* placing = nullptr) {
  for (unsigned cpu = 0; cpu < MAX_CPUS; ++cpu) loads[cpu] = {0, domains::running_on(cpu) != nullptr};
  domains::for_each([&](Domain& domain) {
    domain.for_each_vcpu([&](const Vcpu& vcpu) {
      if (&vcpu != placing && runnable(vcpu) && !running_now(vcpu)) ++loads[vcpu.processor].waiting;
    });
  });
}

CpuMask allowed_cpus(const Vcpu& vcpu) { return placement::allowed_cpus(vcpu.hard_affinity, smp_boot::online_mask()); }

// Makes `cpu` look at its run queue and its timer again: its reschedule request if asked, and
// the event check (an idle CPU wakes; a busy one re-enters the hypervisor, where
// event_check_arrived reprograms its timer and the return path its upcalls and vCPU).
void kick(unsigned cpu, bool reschedule) {
  if (Vcpu* running = domains::running_on(cpu); reschedule && running) running->reschedule_requested = true;
  if (cpu != per_cpu::this_cpu()) cross_cpu::send_event_check(CpuMask::only(cpu));
}

// A runnable vCPU off every CPU goes to the CPU placement chooses (its last if idle and
// allowed, else the least loaded allowed), which is told.
void place(Vcpu& vcpu) {
  placement::CpuLoad loads[MAX_CPUS];
  count_loads(loads, &vcpu);
  const unsigned to = placement::choose_cpu(vcpu.processor, allowed_cpus(vcpu), loads, MAX_CPUS);
  vcpu.processor = to;
  kick(to, false);
}

// An idle CPU takes a waiting vCPU from the busiest CPU, one whose affinity allows it here.
Vcpu* pull(unsigned self) {
  placement::CpuLoad loads[MAX_CPUS];
  count_loads(loads);
  CpuMask tried;
  for (;;) {
    const int from = placement::pull_source(self, loads, MAX_CPUS, tried);
    if (from == placement::none) return nullptr;
    Vcpu* found = nullptr;
    domains::for_each([&](Domain& domain) {
      domain.for_each_vcpu([&](Vcpu& vcpu) {
        if (!found && vcpu.processor == unsigned(from) && runnable(vcpu) && !running_now(vcpu) &&
            allowed_cpus(vcpu).contains(self))
          found = &vcpu;
      });
    });
    if (found) {
      found->processor = self;
      return found;
    }
    tried.add(unsigned(from));
  }
}

// The next vCPU of this CPU's run queue after `previous` (round robin over the runnable vCPUs
// whose processor this CPU is). With sched_smp=1 a waiting vCPU whose hard affinity no longer
// allows this CPU is placed again first.
Vcpu* pick_after(const Vcpu* previous) {
  const unsigned cpu = per_cpu::this_cpu();
  int places[domains::max_domains * Domain::vcpu_capacity];
  unsigned count = 0;
  domains::for_each([&](Domain& domain) {
    domain.for_each_vcpu([&](Vcpu& vcpu) {
      if (!runnable(vcpu) || vcpu.processor != cpu) return;
      if (smp() && !allowed_cpus(vcpu).contains(cpu)) {
        if (&vcpu != previous) place(vcpu);
        return;
      }
      places[count++] = place_of(&vcpu);
    });
  });
  const int next = run_queue::next_round_robin(places, count, place_of(previous));
  if (next == run_queue::none) return nullptr;
  return &domains::at(unsigned(next) / Domain::vcpu_capacity)->vcpus[unsigned(next) % Domain::vcpu_capacity];
}

// Whether a vCPU other than `running` waits in this CPU's run queue: only then does a slice
// need a timer. Stops at the first one (it is asked at every timer reprogramming).
bool others_runnable(const Vcpu* running) {
  const unsigned cpu = per_cpu::this_cpu();
  for (unsigned i = 0; i < domains::max_domains; ++i) {
    Domain* domain = domains::at(i);
    if (!domain) continue;
    for (unsigned id = 0; id < domain->max_vcpus; ++id) {
      const Vcpu& vcpu = domain->vcpus[id];
      if (&vcpu != running && vcpu.created && vcpu.processor == cpu && runnable(vcpu)) return true;
    }
  }
  return false;
}

// A paused vCPU is offline, as Xen's vcpu_sleep_nosync makes it, unless it is also blocked.
unsigned state_when_descheduled(const Vcpu& vcpu) {
  if (!vcpu.domain->alive() || !up(vcpu)) return RUNSTATE_offline;
  if (vcpu.blocked) return RUNSTATE_blocked;
  return vcpu.domain->paused() ? RUNSTATE_offline : RUNSTATE_runnable;
}

// Xen's 32-bit "next_time": the slice the vCPU now on the CPU gets, or -1 for no limit (no
// other vCPU waits).
uint32_t granted_slice(const Vcpu* running) {
  return running && others_runnable(running) ? uint32_t(time_slice_ns) : ~0u;
}

// Xen's vcpu_wake for a vCPU off the CPU: one that may run (up, unblocked, its domain alive
// and unpaused) becomes runnable and bounds the running vCPU's slice; one no longer blocked but
// not allowed to run goes from blocked to offline.
void wake_runstate(Vcpu& vcpu) {
  if (vcpu.runstate.state == RUNSTATE_running) return;  // it changes when it leaves the CPU
  if (runnable(vcpu)) {
    if (vcpu.runstate.state < RUNSTATE_blocked) return;
    change_runstate(&vcpu, RUNSTATE_runnable, system_clock::now_ns());
    if (smp()) place(vcpu);
    Vcpu* running = domains::current();
    if (running && running != &vcpu) timers::reprogram();
  } else if (!vcpu.blocked && vcpu.runstate.state == RUNSTATE_blocked) {
    change_runstate(&vcpu, RUNSTATE_offline, system_clock::now_ns());
  }
}

// Xen's vcpu_sleep_nosync: a vCPU no longer allowed to run (paused, down) that waited for the
// CPU goes offline; a blocked one stays blocked.
void sleep_runstate(Vcpu& vcpu) {
  if (!runnable(vcpu) && vcpu.runstate.state == RUNSTATE_runnable)
    change_runstate(&vcpu, RUNSTATE_offline, system_clock::now_ns());
}

// Xen's sched_switch_units order: TRC_SCHED_SWITCH_INFPREV (how long prev ran),
// TRC_SCHED_SWITCH_INFNEXT (how long next waited if runnable, its slice), TRC_SCHED_SWITCH,
// then the two runstate changes. Times are ns truncated to 32 bits, as Xen's TRACE_nD do.
void trace_switch(Vcpu* previous, Vcpu* next, uint64_t now) {
  perf::add(perf::Counter::sched_ctx);
  VcpuName from = name_of(previous), to = name_of(next);
  const Runstate& waited = runstate_of(next);
  trace::event(TRC_SCHED_SWITCH_INFPREV, from.domain, from.vcpu, uint32_t(now - runstate_of(previous).entry_ns));
  trace::event(TRC_SCHED_SWITCH_INFNEXT, to.domain, to.vcpu,
               waited.state == RUNSTATE_runnable ? uint32_t(now - waited.entry_ns) : 0u, granted_slice(next));
  trace::event(trace::events::kSchedSwitch, from.domain, from.vcpu, to.domain, to.vcpu);
  change_runstate(previous, previous ? state_when_descheduled(*previous) : RUNSTATE_runnable, now);
  change_runstate(next, RUNSTATE_running, now);
}

void start_slice(uint64_t now) {
  here().slice_end_ns = now + time_slice_ns;
  timers::reprogram();
}

// The machine ends when no domain can run again; a domain still paused when the last control
// domain stopped is reported and its detached tables validated for the audit.
[[noreturn]] void end_with_paused_domains() {
  domains::for_each([](Domain& domain) {
    if (!domain.alive()) return;
    printk("Domain %u is paused and no control domain is left to unpause it\n", domain.id);
    writable_page_tables::reattach_all(domain);
  });
  no_domain_left();
}

// The idle CPU's work, as Xen's idle loop: zeroing free frames that are not known clean (those
// domains gave back, and at first all RAM), a few at a time with interrupts off, so that
// allocation finds them zeroed. Between two batches a pending interrupt is taken (STI holds
// interrupts off for one more instruction, the NOP), so a guest waits at most one batch.
bool scrub_while_idle() {
  constexpr unsigned frames_per_batch = 4;
  unsigned scrubbed = 0;
  while (scrubbed < frames_per_batch && boot_memory::scrub_free_frame()) ++scrubbed;
  if (scrubbed == 0) return false;
  asm volatile("sti; nop; cli" ::: "memory");
  return true;
}

// Nothing is runnable: the CPU belongs to the idle vCPU until an interrupt (a guest timer, an
// event check from a CPU that placed a vCPU here) makes a vCPU runnable. The machine ends here,
// on CPU 0, once every domain has stopped. With sched_smp=1 the idle CPU loads the hypervisor's
// own tables (so it leaves the last domain's dirty CPUs and holds no CR3 of a domain that may be
// destroyed), pulls waiting work from busier CPUs, and halts without the hypervisor lock.
// `previous` is null for an AP's first pick. Idle time is accounted per CPU for getcpuinfo
// (time/idle_time.h).
Vcpu* idle_until_runnable(Vcpu* previous) {
  const unsigned cpu = per_cpu::this_cpu();
  const uint64_t idle_from = system_clock::now_ns();
  if (previous) trace_switch(previous, nullptr, idle_from);
  idle_time::enter(cpu, idle_from);
  // Its new state, while its address space is still loaded (and it is current, whose memory
  // the write goes to): its other vCPUs, on other CPUs now, read it there.
  if (smp() && previous) runstate_area::update(*previous);
  domains::set_current(nullptr);
  if (smp()) context_switch::load_idle();
  timers::reprogram();  // a guest's timer interrupts the scrubbing too (an interrupt reprograms it again)
  for (;;) {
    if (!domains::any_can_run()) {
      if (cpu == 0) end_with_paused_domains();
      cross_cpu::send_event_check(CpuMask::only(0));  // CPU 0 ends the machine
    }
    Vcpu* next = pick_after(previous);
    if (!next && smp()) next = pull(cpu);
    if (next) {
      const uint64_t idle_to = system_clock::now_ns();
      idle_time::leave(cpu, idle_to);
      trace_switch(nullptr, next, idle_to);
      return next;
    }
    if (cpu == 0) {
      serial::poll();  // console output waiting for the line, a FIFO's worth per pass
      if (scrub_while_idle()) {
        // Between two batches the other CPUs get the hypervisor lock too: scrubbing all of
        // free memory with it held would stall every guest at its next hypercall for seconds.
        hypervisor_lock::let_others_in();
        continue;
      }
    }
    timers::reprogram();
    const unsigned held = hypervisor_lock::release_all();
    asm volatile("sti; hlt; cli" ::: "memory");
    hypervisor_lock::reacquire(held);
  }
}
}  // namespace

void set_stop_reports(DomainStopped stopped, NoDomainLeft none_left) {
  domain_stopped = stopped;
  no_domain_left = none_left;
}

void report_stopped(Domain& domain) { domain_stopped(domain); }

void start(Vcpu& first) {
  uint64_t now = system_clock::now_ns();
  domains::for_each([&](Domain& domain) {
    domain.for_each_vcpu([&](Vcpu& vcpu) {
      vcpu.runstate = Runstate{runnable(vcpu) ? unsigned(RUNSTATE_runnable) : unsigned(RUNSTATE_offline), now};
    });
  });
  first.runstate = Runstate{RUNSTATE_running, now};
  // The first vCPU takes this CPU from its idle vCPU; every other CPU's idle vCPU runs (with
  // sched_smp=1 it is in the idle loop, else the CPU is parked): its first switch to a guest
  // then records the idle vCPU's running -> runnable as Xen does, which xenalyze needs to know
  // the CPU is free before the next vCPU runs there.
  for (CpuState& state : cpu_states)
    state.idle_runstate = Runstate{&state == &here() ? unsigned(RUNSTATE_runnable) : unsigned(RUNSTATE_running), now};
  context_switch::init();
  hypervisor_lock::acquire();  // released as the first guest is entered
  first.processor = per_cpu::this_cpu();
  domains::set_current(&first);
  first.ran_on.add(first.processor);
  here().slice_end_ns = now + time_slice_ns;
}

Vcpu& first_on_this_cpu(TrapFrame& frame) {
  hypervisor_lock::acquire();
  Vcpu* next = idle_until_runnable(nullptr);
  next->ran_on.add(per_cpu::this_cpu());
  next->reschedule_requested = false;
  context_switch::load(*next, frame);
  start_slice(system_clock::now_ns());
  return *next;
}

void event_check_arrived() {
  if (smp()) timers::reprogram();
}

bool on_cpu(const Vcpu& vcpu) { return running_now(vcpu); }

// Xen's vcpu_sleep_sync for each vCPU of the domain but the caller's own: returns once none is
// on a CPU. Each CPU running one was asked to reschedule (and the domain is paused, dying or
// its vCPUs down, so it will not be picked again); the wait lets that CPU take the lock.
void wait_until_off_cpu(const Domain& domain) {
  if (!smp()) return;
  const Vcpu* self = domains::current();
  for (;;) {
    bool any = false;
    domain.for_each_vcpu([&](const Vcpu& vcpu) {
      if (&vcpu == self || !running_now(vcpu)) return;
      any = true;
      kick(vcpu.processor, true);
    });
    if (!any) return;
    hypervisor_lock::let_others_in(64);
  }
}

void set_hard_affinity(Vcpu& vcpu, CpuMask cpus) {
  vcpu.hard_affinity = cpus;
  if (!smp() || allowed_cpus(vcpu).contains(vcpu.processor)) return;
  if (running_now(vcpu))
    kick(vcpu.processor, true);  // it moves at its next schedule
  else if (runnable(vcpu))
    place(vcpu);
  else
    vcpu.processor = allowed_cpus(vcpu).next(0);  // where it wakes next
}

namespace {
// Everything but the common case, out of line: schedule() runs before every return to a
// guest (after each hypercall and trap), and inlined, this body made every one of them save
// and restore five registers.
[[gnu::noinline]] void reschedule(Vcpu& previous, TrapFrame& frame) {
  if (!previous.domain->alive()) {
    domain_stopped(*previous.domain);
    if (smp())  // its other vCPUs leave their CPUs too
      previous.domain->for_each_vcpu([&](const Vcpu& vcpu) {
        if (&vcpu != &previous && running_now(vcpu)) kick(vcpu.processor, true);
      });
  }
  if (keeps_cpu(previous)) return;
  CpuState& state = here();
  previous.reschedule_requested = false;
  bool preempted = state.slice_ended && may_keep_cpu(previous);
  state.slice_ended = false;
  uint64_t now = system_clock::now_ns();
  Vcpu* next = pick_after(&previous);
  if (next == &previous) {  // yielded or out of time, but nobody else wants the CPU
    VcpuName name = name_of(next);
    trace::event(TRC_SCHED_SWITCH_INFCONT, name.domain, name.vcpu, uint32_t(now - next->runstate.entry_ns),
                 granted_slice(next));
    trace::event(trace::events::kSchedContinueRunning, name.vcpu | (name.domain << 16));
    start_slice(now);
    return;
  }
  if (preempted) perf::add(perf::Counter::sched_preempt);
  context_switch::save(previous, frame);
  // Its hard affinity no longer allows this CPU: placed elsewhere now that its state is saved
  // (no other CPU can pick it before this one lets the hypervisor lock go, with another current).
  if (smp() && runnable(previous) && !allowed_cpus(previous).contains(previous.processor)) place(previous);
  if (next) {
    trace_switch(&previous, next, now);
    runstate_area::update(previous);  // its new state, while its address space is still loaded
  } else
    next = idle_until_runnable(&previous);
  next->ran_on.add(per_cpu::this_cpu());
  next->reschedule_requested = false;  // asked of it while it waited elsewhere: done
  context_switch::load(*next, frame);
  start_slice(system_clock::now_ns());
}
}  // namespace

void schedule(TrapFrame& frame) {
  Vcpu& previous = *domains::current();
  if (keeps_cpu(previous)) [[likely]]
    return;
  reschedule(previous, frame);
}

void block() {
  Vcpu* vcpu = domains::current();
  vcpu_info_t* info = vcpu->info();
  info->evtchn_upcall_mask = 0;
  if (info->evtchn_upcall_pending) return;
  vcpu->blocked = true;
  VcpuName name = name_of(vcpu);
  trace::event(TRC_SCHED_BLOCK, name.domain, name.vcpu);
}

void poll_block(Vcpu& vcpu) {
  vcpu.blocked = true;
  VcpuName name = name_of(&vcpu);
  trace::event(TRC_SCHED_BLOCK, name.domain, name.vcpu);
  timers::reprogram();  // its poll timeout
}

void yield() {
  VcpuName name = name_of(domains::current());
  trace::event(TRC_SCHED_YIELD, name.domain, name.vcpu);
  domains::current()->reschedule_requested = true;
}

void wake(Vcpu& vcpu) {
  if (!vcpu.blocked) {
    // Running on another CPU: the event check makes it enter the hypervisor, whose return path
    // delivers the upcall.
    if (smp() && vcpu.processor != per_cpu::this_cpu() && running_now(vcpu)) kick(vcpu.processor, false);
    return;
  }
  VcpuName name = name_of(&vcpu);
  trace::event(TRC_SCHED_WAKE, name.domain, name.vcpu);
  vcpu.blocked = false;
  // Blocked in the runstate sense only once descheduled (the same hypercall may block and wake).
  // Woken but paused or down: offline until unpaused or up, as Xen's vcpu_wake.
  if (!vcpu.domain->alive() || vcpu.runstate.state != RUNSTATE_blocked) return;
  wake_runstate(vcpu);
}

// Xen's vcpu_sleep_nosync: a runnable vCPU goes offline. With one CPU the vCPU is never the
// running one (a domain cannot pause itself); on another CPU it is asked to leave it
// (wait_until_off_cpu waits for that).
void paused(Vcpu& vcpu) {
  VcpuName name = name_of(&vcpu);
  trace::event(TRC_SCHED_SLEEP, name.domain, name.vcpu);
  if (smp() && running_now(vcpu)) {
    kick(vcpu.processor, true);
    return;
  }
  sleep_runstate(vcpu);
}

// Xen's vcpu_wake after the last unpause: runnable again unless blocked or down; the running
// vCPU's slice is bounded from now on.
void unpaused(Vcpu& vcpu) {
  VcpuName name = name_of(&vcpu);
  trace::event(TRC_SCHED_WAKE, name.domain, name.vcpu);
  if (!runnable(vcpu) || vcpu.runstate.state < RUNSTATE_blocked) return;
  wake_runstate(vcpu);
}

// A vCPU created down, or taken down (destroydomain, a context without VGCF_online): offline,
// and never picked.
void vcpu_down(Vcpu& vcpu) {
  uint64_t now = system_clock::now_ns();
  if (vcpu.runstate.entry_ns == 0)
    vcpu.runstate = Runstate{RUNSTATE_offline, now};
  else if (&vcpu != domains::current() && !(smp() && running_now(vcpu)))
    change_runstate(&vcpu, RUNSTATE_offline, now);
}

// VCPUOP_down (Xen's vcpu_sleep_nosync): never picked again until up; the running vCPU taking
// itself down leaves the CPU on its way back to the guest.
void vcpu_taken_down(Vcpu& vcpu) {
  VcpuName name = name_of(&vcpu);
  trace::event(TRC_SCHED_SLEEP, name.domain, name.vcpu);
  if (&vcpu == domains::current())
    vcpu.reschedule_requested = true;
  else if (smp() && running_now(vcpu))
    kick(vcpu.processor, true);
  else
    sleep_runstate(vcpu);
}

// A vCPU given its context online (setvcpucontext, VCPUOP_initialise): runnable from now on
// unless blocked or its domain paused (the new domain's controller pause holds it until the
// toolstack unpauses it).
void vcpu_up(Vcpu& vcpu) {
  // A vCPU coming up starts on base pointers set in its context (an MmuOperation that
  // reattached already); reattaching here too costs nothing when nothing is detached.
  if (smp()) writable_page_tables::reattach_all(*vcpu.domain);
  if (&vcpu != domains::current()) wake_runstate(vcpu);
}

// VCPUOP_up: the same, traced as Xen's vcpu_wake.
void vcpu_brought_up(Vcpu& vcpu) {
  VcpuName name = name_of(&vcpu);
  trace::event(TRC_SCHED_WAKE, name.domain, name.vcpu);
  vcpu_up(vcpu);
}

uint64_t running_ns(const Vcpu& vcpu) {
  const Runstate& runstate = vcpu.runstate;
  uint64_t total = runstate.time_ns[RUNSTATE_running];
  if (runstate.state == RUNSTATE_running) total += system_clock::now_ns() - runstate.entry_ns;
  return total;
}

void slice_expired() {
  if (Vcpu* running = domains::current()) running->reschedule_requested = true;
  here().slice_ended = true;
}

uint64_t slice_deadline_ns() {
  Vcpu* running = domains::current();
  if (!running) return 0;
  return others_runnable(running) ? here().slice_end_ns : 0;
}
}  // namespace scheduler
