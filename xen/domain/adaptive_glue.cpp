#include "domain/adaptive_glue.h"

#include "console/console.h"
#include "trace/format/events.h"
#include "tracing/trace_buffers.h"

namespace adaptive_ptwr {
void switched_path(uint64_t table_mfn, ptwr::AdaptiveSwitch switched, unsigned detail) {
  trace::event(trace::events::kPtwrAdaptive, trace::low(table_mfn), trace::high(table_mfn), unsigned(switched), detail);
  log_debug("ptwr: adaptive l1 %lx now %s\n", table_mfn,
            switched == ptwr::AdaptiveSwitch::to_emulate ? "emulated (sparse writes)" : "detached (a run)");
}

void reattached(Domain& domain, uint64_t table_mfn, unsigned changed) {
  if (domain.pt_write_mode != PageTableWriteMode::adaptive) return;
  ptwr::AdaptiveSwitch switched = domain.adaptive_ptwr.on_reattached(table_mfn, changed);
  if (switched != ptwr::AdaptiveSwitch::none) [[unlikely]]
    switched_path(table_mfn, switched, changed);
}
}  // namespace adaptive_ptwr
