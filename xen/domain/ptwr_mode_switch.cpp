#include "domain/ptwr_mode_switch.h"

#include "console/console.h"
#include "control/control_abi.h"
#include "control/ptwr_mode_rules.h"
#include "domain/domain.h"
#include "memory/boot_memory.h"
#include "ptwr/writable_page_tables_glue.h"

namespace ptwr_mode_switch {
namespace abi = pvhv::xen_abi;

namespace {
const char* mode_name(PageTableWriteMode mode) {
  return mode == PageTableWriteMode::writable ? "writable" : "emulate";
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
  const bool writable = target.pt_write_mode == PageTableWriteMode::writable;
  control::PtwrModeDecision decision = control::decide_ptwr_mode(request, writable, target.dying());
  if (decision.error) return decision.error;
  switch (decision.action) {
    case control::PtwrModeAction::report: break;
    case control::PtwrModeAction::enable_writable:
      if (!writable_page_tables::enable(target)) return -XEN_ENOMEM;
      target.pt_write_mode = PageTableWriteMode::writable;
      break;
    case control::PtwrModeAction::rehook_to_emulate:
      // disable() reattaches (rehooks) both slots, then frees the snapshots: after it no L1
      // of the domain is detached, and the page-fault path no longer detaches any.
      writable_page_tables::disable(target);
      target.pt_write_mode = PageTableWriteMode::emulate;
      break;
  }
  if (decision.action != control::PtwrModeAction::report) {
    // Cached walks (pte_emulation's translation cache) were found under the other mode.
    boot_memory::frame_table().walks_changed();
    printk_level(LogLevel::info, "d%u: ptwr mode %s\n", unsigned(target.id), mode_name(target.pt_write_mode));
  }
  request.mode = target.pt_write_mode == PageTableWriteMode::writable ? abi::kPtwrWritable : abi::kPtwrEmulate;
  return 0;
}
}  // namespace ptwr_mode_switch
