#include "trace/parse/event_catalog.h"

#include "trace/format/events.h"

namespace trace {

const char* event_name(uint32_t event) {
  using namespace events;
  switch (event) {
    case kLostRecords: return "lost_records";
    case kWrapBuffer: return "wrap_buffer";
    case kCpuChange: return "cpu_change";
    case kPvPageFault: return "pv_page_fault";
    case TRC_PV_PAGE_FAULT: return "pv_page_fault32";
    case kPvPtwrEmulation: return "pv_ptwr_emulation";
    case TRC_PV_PTWR_EMULATION_PAE: return "pv_ptwr_emulation_pae";
    case kPvHypercallV2: return "pv_hypercall";
    case kPvHypercallSubcall: return "pv_hypercall_subcall";
    case kSchedContinueRunning: return "sched_continue_running";
    case kSchedSwitch: return "sched_switch";
    case kSchedSwitchInfPrev: return "sched_switch_infprev";
    case kSchedSwitchInfNext: return "sched_switch_infnext";
    case kSchedSwitchInfCont: return "sched_switch_infcont";
    case kSchedWake: return "sched_wake";
    case kSchedBlock: return "sched_block";
    case kSchedYield: return "sched_yield";
    case kPtwrUnhook: return "ptwr_unhook";
    case kPtwrRehook: return "ptwr_rehook";
    case kPtwrDetachInactive: return "ptwr_detach_inactive";
    case kTlbFlush: return "tlb_flush";
    case kInvlpg: return "invlpg";
    case kPtwrSlotEvict: return "ptwr_slot_evict";
    case kAuditResult: return "audit_result";
    case kOperationBegin: return "operation_begin";
    case kOperationEnd: return "operation_end";
    case kTscFrequency: return "tsc_frequency";
    case kCaptureDrain: return "capture_drain";
    case kPteWriteFault: return "pte_write_fault";
    case kPtwrAdaptive: return "ptwr_adaptive";
    case kFlushIpiSend: return "flush_ipi_send";
    case kFlushIpiReceive: return "flush_ipi_receive";
    default: break;
  }
  if ((event & 0x0ffff00fu) == TRC_SCHED_RUNSTATE_CHANGE) return "sched_runstate_change";
  // Unnamed events of a known class still say which class they belong to.
  static const char* by_class[kToplevelCount] = {"gen_other", "sched_other", "dom0op_other", "hvm_other",
                                                 "mem_other", "pv_other",    "shadow_other", "hw_other"};
  int toplevel = toplevel_class(event);
  return toplevel >= 0 ? by_class[toplevel] : "unknown";
}

int expected_extra_words(uint32_t event) {
  using namespace events;
  if (is_pvhv(event)) {
    unsigned n = pvhv_extra_words(event);
    return n ? int(n) : -1;
  }
  switch (event) {
    case kCpuChange: return 2;
    case kLostRecords: return 4;
    case kPvPageFault: return 5;
    case kPvPtwrEmulation: return 6;
    case TRC_PV_PAGE_FAULT: return 3;
    case TRC_PV_PTWR_EMULATION_PAE: return 4;
    default: return -1;
  }
}

int toplevel_class(uint32_t event) {
  uint32_t main = (event >> 16) & 0xfff;
  if (main == 0 || (main & (main - 1)) != 0 || main > 0x80) return -1;
  int index = 0;
  while (!(main & 1u)) {
    main >>= 1;
    index++;
  }
  return index;
}

bool is_known_class(uint32_t event) {
  return toplevel_class(event) >= 0 || ((event >> 16) & 0xfff) == (TRC_GUEST >> 16);
}

const char* toplevel_name(int toplevel) {
  static const char* names[kToplevelCount] = {"gen", "sched", "dom0op", "hvm", "mem", "pv", "shadow", "hw"};
  return toplevel >= 0 && toplevel < kToplevelCount ? names[toplevel] : "?";
}

const char* hypercall_name(uint32_t op) {
  // Numbers from <xen/xen.h> (__HYPERVISOR_*); the names are the ABI's own.
  static const char* names[] = {"set_trap_table",
                                "mmu_update",
                                "set_gdt",
                                "stack_switch",
                                "set_callbacks",
                                "fpu_taskswitch",
                                "sched_op_compat",
                                "platform_op",
                                "set_debugreg",
                                "get_debugreg",
                                "update_descriptor",
                                nullptr,
                                "memory_op",
                                "multicall",
                                "update_va_mapping",
                                "set_timer_op",
                                "event_channel_op_compat",
                                "xen_version",
                                "console_io",
                                "physdev_op_compat",
                                "grant_table_op",
                                "vm_assist",
                                "update_va_mapping_otherdomain",
                                "iret",
                                "vcpu_op",
                                "set_segment_base",
                                "mmuext_op",
                                "xsm_op",
                                "nmi_op",
                                "sched_op",
                                "callback_op",
                                "xenoprof_op",
                                "event_channel_op",
                                "physdev_op",
                                "hvm_op",
                                "sysctl",
                                "domctl",
                                "kexec_op",
                                "tmem_op",
                                "argo_op",
                                "xenpmu_op",
                                "dm_op",
                                "hypfs_op"};
  return op < sizeof names / sizeof names[0] ? names[op] : nullptr;
}

}  // namespace trace
