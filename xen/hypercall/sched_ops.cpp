// Scheduling and timer hypercalls: sched_op, set_timer_op, and vcpu_op on any vCPU of the
// caller's domain (initialise, up, down, is_up, runstate, timers, vcpu_info and runstate areas).
#include "hypercall/domain_lifecycle.h"  // first: it brings in the tools' view of the headers (control_abi.h)
#include "domain/runstate_area.h"
#include "domain/vcpu_info_area.h"
#include "abi/xen_abi.h"
#include <xen/errno.h>
#include <xen/sched.h>
#include <xen/vcpu.h>
#include <xen/xen.h>
#include "domain/domain.h"
#include "domain/shared_info.h"
#include "sched/scheduler.h"
#include "sched/timers.h"
#include "hypercall/dispatch.h"
#include "domain/guest_memory.h"
#include "time/clock.h"
#include "event/event_channels.h"

namespace hypercall {
namespace {
long shutdown(Vcpu& vcpu, uint64_t argument) {
  sched_shutdown_t request;
  if (!guest_memory::read(vcpu, argument, request)) return -XEN_EFAULT;
  if (request.reason > SHUTDOWN_MAX) return -XEN_EINVAL;
  domains::shutdown(*vcpu.domain, request.reason);
  return 0;
}

// Xen's SCHEDOP_remote_shutdown: the domain by id (-ESRCH), then XSM_DM_PRIV (the control
// domain, or a device model of the target: none here), then domain_shutdown, which accepts
// any reason (beyond SHUTDOWN_MAX it is only recorded).
long remote_shutdown(Vcpu& vcpu, uint64_t argument) {
  sched_remote_shutdown_t request;
  if (!guest_memory::read(vcpu, argument, request)) return -XEN_EFAULT;
  Domain* target = domains::find(request.domain_id);
  if (!target) return -XEN_ESRCH;
  if (!vcpu.domain->privileged) return -XEN_EPERM;
  domains::shutdown(*target, uint8_t(request.reason));            // Xen's domain_shutdown takes a u8
  if (target != vcpu.domain) scheduler::report_stopped(*target);  // it will not run again to report it
  return 0;
}

// Xen's VCPUOP_set_singleshot_timer (4.17.7: VCPU_SSHOTTMR_future is ignored): only the
// calling vCPU's own timer (-EINVAL for another); a deadline already past sends VIRQ_TIMER at
// once instead of arming the timer.
long singleshot(Vcpu& caller, Vcpu& vcpu, uint64_t argument) {
  if (&vcpu != &caller) return -XEN_EINVAL;
  vcpu_set_singleshot_timer_t timer;
  if (!guest_memory::read(caller, argument, timer)) return -XEN_EFAULT;
  if (timer.timeout_abs_ns < system_clock::now_ns()) {
    timers::set_singleshot(vcpu, 0);
    event_channels::send_virq(vcpu, VIRQ_TIMER);
    return 0;
  }
  timers::set_singleshot(vcpu, timer.timeout_abs_ns);
  return 0;
}

long periodic(Vcpu& caller, Vcpu& vcpu, uint64_t argument) {
  vcpu_set_periodic_timer_t timer;
  if (!guest_memory::read(caller, argument, timer)) return -XEN_EFAULT;
  // Xen's bounds: at least 1 ms, at most STIME_DELTA_MAX (2^62 - 1 ns), so a deadline never wraps.
  constexpr uint64_t minimum_period_ns = 1000000, maximum_period_ns = ~uint64_t{0} >> 2;
  if (timer.period_ns < minimum_period_ns || timer.period_ns > maximum_period_ns) return -XEN_EINVAL;
  timers::set_periodic(vcpu, timer.period_ns);
  return 0;
}

// Xen's vcpu_runstate_get: the runstate with the time in the current state counted up to now.
long runstate_info(Vcpu& caller, const Vcpu& vcpu, uint64_t argument) {
  vcpu_runstate_info info{};
  const Runstate& runstate = vcpu.runstate;
  info.state = int(runstate.state);
  info.state_entry_time = runstate.entry_ns;
  for (unsigned i = 0; i < 4; ++i) info.time[i] = runstate.time_ns[i];
  const uint64_t now = system_clock::now_ns();
  if (now > runstate.entry_ns && runstate.state < 4) info.time[runstate.state] += now - runstate.entry_ns;
  return guest_memory::write(caller, argument, info) ? 0 : -XEN_EFAULT;
}

// VCPUOP_initialise: a first context for a vCPU of the caller's domain (-EFAULT unreadable,
// -EEXIST for one that has a context, then setvcpucontext's checks). 5 KiB: kept off the
// hypervisor stack; shared, under the hypervisor lock (sched/hypervisor_lock), and no hypercall
// nests another.
vcpu_guest_context initialise_buffer;
long initialise(Vcpu& caller, Vcpu& vcpu, uint64_t argument) {
  if (!guest_memory::read(caller, argument, initialise_buffer)) return -XEN_EFAULT;
  return domain_lifecycle::initialise_vcpu(vcpu, initialise_buffer);
}

// Xen's VCPUOP_up: only a vCPU with a context (-EINVAL); up already, nothing to do.
long up(Vcpu& vcpu) {
  if (!vcpu.initialised) return -XEN_EINVAL;
  if (!vcpu.online) {
    vcpu.online = true;
    scheduler::vcpu_brought_up(vcpu);
  }
  return 0;
}

// Xen's VCPUOP_down: the domain's last vCPU up going down powers the domain off (Xen's
// domain_shutdown(SHUTDOWN_poweroff), answered 0); any other goes down, the caller itself too
// (it leaves the CPU before it returns, and goes on after the hypercall once it is up again).
long down(Vcpu& vcpu) {
  Domain& domain = *vcpu.domain;
  bool another_up = false;
  domain.for_each_vcpu([&](const Vcpu& other) { another_up = another_up || (&other != &vcpu && other.online); });
  if (!another_up) {
    domains::shutdown(domain, SHUTDOWN_poweroff);  // the caller's own domain: it leaves the CPU on return
    return 0;
  }
  if (vcpu.online) {
    vcpu.online = false;
    scheduler::vcpu_taken_down(vcpu);
  }
  return 0;
}
}  // namespace

// Xen's do_poll (SCHEDOP_poll, which Linux's PV spinlock slow path waits in, its BUG() on any
// error): more than 128 ports -EINVAL, an unreadable argument or port -EFAULT, a port beyond the
// domain's -EINVAL; one of them pending already returns 0 at once; otherwise the vCPU blocks
// (events stay masked or not as they are, unlike SCHEDOP_block) until one of the ports becomes
// pending (any of the domain's ports for a list of other than one), an event reaches it, or
// `timeout` (system time; 0: none) passes (event_channels::check_pollers, sched/timers).
long poll(Vcpu& vcpu, uint64_t argument) {
  sched_poll_t request;
  if (!guest_memory::read(vcpu, argument, request)) return -XEN_EFAULT;
  if (request.nr_ports > 128) return -XEN_EINVAL;
  const uint64_t ports = reinterpret_cast<uint64_t>(request.ports.p);
  evtchn_port_t port = 0;
  for (unsigned i = 0; i < request.nr_ports; ++i) {
    if (!guest_memory::read(vcpu, ports + uint64_t(i) * sizeof(port), port)) return -XEN_EFAULT;
    if (long pending = event_channels::port_poll(*vcpu.domain, port)) return pending > 0 ? 0 : pending;
  }
  vcpu.polling = true;
  vcpu.poll_port = request.nr_ports == 1 ? int32_t(port) : -1;
  vcpu.poll_deadline_ns = request.timeout;
  if (request.timeout && system_clock::now_ns() >= request.timeout) {  // Xen's timer fires at once
    vcpu.end_poll();
    return 0;
  }
  scheduler::poll_block(vcpu);
  return 0;
}

long sched_op(Vcpu& vcpu, TrapFrame&, Arguments& args) {
  switch (args.a[0]) {
    case SCHEDOP_yield: scheduler::yield(); return 0;
    case SCHEDOP_block: scheduler::block(); return 0;
    case SCHEDOP_poll: return poll(vcpu, args.a[1]);
    case SCHEDOP_shutdown: return shutdown(vcpu, args.a[1]);
    case SCHEDOP_remote_shutdown: return remote_shutdown(vcpu, args.a[1]);
    case SCHEDOP_shutdown_code: {
      sched_shutdown_t request;
      if (!guest_memory::read(vcpu, args.a[1], request)) return -XEN_EFAULT;
      return request.reason > SHUTDOWN_MAX ? -XEN_EINVAL : 0;
    }
    default: return -XEN_ENOSYS;
  }
}

// The timeout is absolute system time in ns; 0 cancels the timer.
long set_timer_op(Vcpu& vcpu, TrapFrame&, Arguments& args) {
  timers::set_singleshot(vcpu, args.a[0]);
  return 0;
}

// Xen's do_vcpu_op(int cmd, unsigned int vcpuid, arg): both 32-bit, the vCPU one of the
// caller's domain (-ENOENT otherwise, before the command is looked at).
long vcpu_op(Vcpu& caller, TrapFrame&, Arguments& args) {
  const int command = int(args.a[0]);
  const uint64_t argument = args.a[2];
  Vcpu* target = caller.domain->vcpu(uint32_t(args.a[1]));
  if (!target) return -XEN_ENOENT;
  Vcpu& vcpu = *target;
  switch (command) {
    case VCPUOP_initialise: return initialise(caller, vcpu, argument);
    case VCPUOP_up: return up(vcpu);
    case VCPUOP_down: return down(vcpu);
    case VCPUOP_is_up: return vcpu.online ? 1 : 0;
    case VCPUOP_get_runstate_info: return runstate_info(caller, vcpu, argument);
    case VCPUOP_set_singleshot_timer: return singleshot(caller, vcpu, argument);
    case VCPUOP_stop_singleshot_timer:
      if (&vcpu != &caller) return -XEN_EINVAL;
      timers::set_singleshot(vcpu, 0);
      return 0;
    case VCPUOP_set_periodic_timer: return periodic(caller, vcpu, argument);
    case VCPUOP_stop_periodic_timer: timers::set_periodic(vcpu, 0); return 0;
    case VCPUOP_register_runstate_memory_area: return runstate_area::register_area(caller, vcpu, argument);
    case VCPUOP_register_vcpu_info: return vcpu_info_area::register_info(caller, vcpu, argument);
    case VCPUOP_register_vcpu_time_memory_area: return shared_info_page::register_time_area(caller, vcpu, argument);
    default: return -XEN_ENOSYS;
  }
}

}  // namespace hypercall
