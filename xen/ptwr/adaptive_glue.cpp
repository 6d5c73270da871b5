#include "ptwr/adaptive_glue.h"

#include "console/console.h"
#include "hypervisor/perf_counters.h"
#include "trace/format/events.h"
#include "tracing/trace_buffers.h"

namespace adaptive_ptwr {
namespace {
// What the guest did besides writing page tables: every hypercall (the iret back to user mode
// among them), every exception bounced to it and every system call of its user code. Two write
// faults with the same count have nothing of the guest's between them: a run. (The counters are
// the machine's; another domain running in between moves them too, which only breaks a run.)
uint64_t guest_activity() {
  return perf::value(perf::Counter::hypercalls) + perf::value(perf::Counter::bounced_exceptions) +
         perf::value(perf::Counter::guest_syscalls);
}

[[gnu::cold]] void trace_switch(uint64_t table_mfn, ptwr::AdaptiveSwitch switched, unsigned detail) {
  trace::event(trace::events::kPtwrAdaptive, trace::low(table_mfn), trace::high(table_mfn), unsigned(switched), detail);
  log_debug("ptwr: adaptive l1 %lx now %s\n", table_mfn,
            switched == ptwr::AdaptiveSwitch::to_emulate ? "emulated (sparse writes)" : "detached (a run)");
}
}  // namespace

bool policy_wants_detach(Domain& domain, uint64_t table_mfn) {
  ptwr::AdaptiveDecision decision = domain.adaptive_ptwr.on_write_fault(table_mfn, guest_activity());
  if (decision.switched != ptwr::AdaptiveSwitch::none) [[unlikely]]
    trace_switch(table_mfn, decision.switched, ptwr::AdaptivePolicy::kRunLength);
  return decision.path == ptwr::AdaptivePath::detach;
}

void reattached(Domain& domain, uint64_t table_mfn, unsigned changed) {
  if (domain.pt_write_mode != PageTableWriteMode::adaptive) return;
  ptwr::AdaptiveSwitch switched = domain.adaptive_ptwr.on_reattached(table_mfn, changed);
  if (switched != ptwr::AdaptiveSwitch::none) [[unlikely]]
    trace_switch(table_mfn, switched, changed);
}
}  // namespace adaptive_ptwr
