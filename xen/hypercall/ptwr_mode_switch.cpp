#include "hypercall/ptwr_mode_switch.h"

#include "console/console.h"
#include "control/control_abi.h"
#include "control/ptwr_mode_rules.h"
#include "domain/domain.h"
#include "memory/boot_memory.h"
#include "domain/writable_page_tables_glue.h"

namespace ptwr_mode_switch {
namespace abi = pvhv::xen_abi;

namespace {
uint32_t abi_mode(PageTableWriteMode mode) {
  switch (mode) {
    case PageTableWriteMode::emulate: break;
    case PageTableWriteMode::writable: return abi::kPtwrWritable;
    case PageTableWriteMode::adaptive: return abi::kPtwrAdaptive;
  }
  return abi::kPtwrEmulate;
}

PageTableWriteMode from_abi(uint32_t mode) {
  return mode == abi::kPtwrWritable   ? PageTableWriteMode::writable
         : mode == abi::kPtwrAdaptive ? PageTableWriteMode::adaptive
                                      : PageTableWriteMode::emulate;
}
}  // namespace

namespace {
// The kernel's PVHV note, from the toolstack that builds the domain (libxenguest).
long apply_reads_unhooked(Domain& target, abi::DomctlPtwrMode& request) {
  if (long error = control::decide_reads_unhooked(request, target.dying(), target.creation_finished)) return error;
  target.writable_pagetables.set_guest_reads_unhooked_entries(request.mode == 1);
  printk_level(LogLevel::info, "d%u: kernel reads unhooked entries: %s (PVHV note from its builder)\n",
               unsigned(target.id), request.mode == 1 ? "yes" : "no");
  return 0;
}
}  // namespace

long apply(Domain& target, abi::DomctlPtwrMode& request) {
  if (request.op == abi::kPtwrReadsUnhookedSet) return apply_reads_unhooked(target, request);
  control::PtwrModeDecision decision =
      control::decide_ptwr_mode(request, abi_mode(target.pt_write_mode), target.dying());
  if (decision.error) return decision.error;
  switch (decision.action) {
    case control::PtwrModeAction::report: break;
    case control::PtwrModeAction::enable_writable:
      if (!writable_page_tables::enable(target)) return -XEN_ENOMEM;
      target.adaptive_ptwr.reset();
      target.pt_write_mode = from_abi(request.mode);
      break;
    case control::PtwrModeAction::rehook_to_emulate:
      // disable() reattaches (rehooks) both slots, then frees the snapshots: after it no L1
      // of the domain is detached, and the page-fault path no longer detaches any.
      writable_page_tables::disable(target);
      target.pt_write_mode = PageTableWriteMode::emulate;
      break;
    case control::PtwrModeAction::switch_detaching:
      // Both modes detach through the same slots: what is detached stays so, and is reattached
      // by the usual triggers. Adaptive starts with no history.
      target.adaptive_ptwr.reset();
      target.pt_write_mode = from_abi(request.mode);
      break;
  }
  if (decision.action != control::PtwrModeAction::report) {
    // Cached walks (pte_emulation's translation cache) were found under the other mode.
    boot_memory::frame_table().walks_changed();
    printk_level(LogLevel::info, "d%u: ptwr mode %s\n", unsigned(target.id),
                 page_table_write_mode_name(target.pt_write_mode));
  }
  request.mode = abi_mode(target.pt_write_mode);
  return 0;
}
}  // namespace ptwr_mode_switch
