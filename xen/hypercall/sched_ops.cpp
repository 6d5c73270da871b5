// Scheduling and timer hypercalls: sched_op, set_timer_op, vcpu_op (timers, is_up).
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

long singleshot(Vcpu& vcpu, uint64_t argument) {
  vcpu_set_singleshot_timer_t timer;
  if (!guest_memory::read(vcpu, argument, timer)) return -XEN_EFAULT;
  if ((timer.flags & VCPU_SSHOTTMR_future) && timer.timeout_abs_ns < system_clock::now_ns()) return -XEN_ETIME;
  timers::set_singleshot(vcpu, timer.timeout_abs_ns ? timer.timeout_abs_ns : 1);
  return 0;
}

long periodic(Vcpu& vcpu, uint64_t argument) {
  vcpu_set_periodic_timer_t timer;
  if (!guest_memory::read(vcpu, argument, timer)) return -XEN_EFAULT;
  // Xen's bounds: at least 1 ms, at most STIME_DELTA_MAX (2^62 - 1 ns), so a deadline never wraps.
  constexpr uint64_t minimum_period_ns = 1000000, maximum_period_ns = ~uint64_t{0} >> 2;
  if (timer.period_ns < minimum_period_ns || timer.period_ns > maximum_period_ns) return -XEN_EINVAL;
  timers::set_periodic(vcpu, timer.period_ns);
  return 0;
}
}  // namespace

long sched_op(Vcpu& vcpu, TrapFrame&, Arguments& args) {
  switch (args.a[0]) {
    case SCHEDOP_yield: scheduler::yield(); return 0;
    case SCHEDOP_block: scheduler::block(); return 0;
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

long vcpu_op(Vcpu& vcpu, TrapFrame&, Arguments& args) {
  uint64_t command = args.a[0], target = args.a[1], argument = args.a[2];
  if (target != 0) return -XEN_ENOENT;
  switch (command) {
    case VCPUOP_is_up: return 1;
    case VCPUOP_set_singleshot_timer: return singleshot(vcpu, argument);
    case VCPUOP_stop_singleshot_timer: timers::set_singleshot(vcpu, 0); return 0;
    case VCPUOP_set_periodic_timer: return periodic(vcpu, argument);
    case VCPUOP_stop_periodic_timer: timers::set_periodic(vcpu, 0); return 0;
    case VCPUOP_register_runstate_memory_area: return runstate_area::register_area(vcpu, argument);
    case VCPUOP_register_vcpu_info: return vcpu_info_area::register_info(vcpu, argument);
    case VCPUOP_register_vcpu_time_memory_area: return shared_info_page::register_time_area(vcpu, argument);
    default: return -XEN_ENOSYS;
  }
}

}  // namespace hypercall
