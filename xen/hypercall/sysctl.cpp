// HYPERVISOR_sysctl: system-wide control operations for dom0's tools, refused (-EPERM) for
// any other domain. Served: XEN_SYSCTL_perfc_op (software performance counters),
// XEN_SYSCTL_tbuf_op (trace buffers) and our frame-table audit (sysctl_pvhv_audit).
// sysctl.h is the tools' interface (we implement it): its guest-handle types exist only for
// __XEN_TOOLS__, which must be set before the first Xen header.
#define __XEN_TOOLS__ 1
#include "mm/xen_abi.h"
#include <xen/sysctl.h>
#include "domain/domain.h"
#include "hypercall/dispatch.h"
#include "hypervisor/perf_counters.h"
#include "pv/guest_memory.h"
#include "tracing/trace_buffers.h"
#include "domain/frame_audit.h"
#include "ptwr/writable_page_tables_glue.h"

namespace hypercall {
// Ours, outside Xen's sysctl numbering (which ends below 64): run the frame-table audit now
// and return the number of frames whose counts disagree with the page tables (0: clean).
constexpr uint32_t sysctl_pvhv_audit = 0x8000;

namespace {
constexpr unsigned counter_count = unsigned(perf::Counter::count);

// Every counter has one value (one CPU runs guests); values are 32-bit as in Xen's ABI.
long perfc_query(Vcpu& vcpu, xen_sysctl_perfc_op& op) {
  op.nr_counters = counter_count;
  op.nr_vals = counter_count;
  uint64_t desc = uint64_t(op.desc.p), val = uint64_t(op.val.p);
  for (unsigned i = 0; i < counter_count; ++i) {
    auto counter = static_cast<perf::Counter>(i);
    if (desc) {
      xen_sysctl_perfc_desc_t d{};
      const char* name = perf::name(counter);
      for (unsigned c = 0; name[c] && c + 1 < sizeof(d.name); ++c) d.name[c] = name[c];
      d.nr_vals = 1;
      if (!guest_memory::write(vcpu, desc + i * sizeof(d), d)) return -XEN_EFAULT;
    }
    if (val) {
      xen_sysctl_perfc_val_t v = xen_sysctl_perfc_val_t(perf::value(counter));
      if (!guest_memory::write(vcpu, val + i * sizeof(v), v)) return -XEN_EFAULT;
    }
  }
  return 0;
}

// Trace buffers, as Xen's tb_control: set the size before enabling; get_info gives the t_info
// frame dom0 maps to find the per-CPU buffers.
long tbuf_op(Vcpu& vcpu, xen_sysctl_tbuf_op& op) {
  switch (op.cmd) {
    case XEN_SYSCTL_TBUFOP_get_info: {
      trace_buffers::Info info = trace_buffers::info();
      op.evt_mask = info.event_mask;
      op.buffer_mfn = info.t_info_mfn;
      op.size = info.t_info_bytes;
      return 0;
    }
    case XEN_SYSCTL_TBUFOP_set_cpu_mask: {
      uint64_t mask = 0;
      uint32_t bytes = (op.cpu_mask.nr_bits + 7) / 8;
      if (bytes > sizeof(mask)) bytes = sizeof(mask);
      if (bytes && !guest_memory::copy_from(vcpu, &mask, uint64_t(op.cpu_mask.bitmap.p), bytes)) return -XEN_EFAULT;
      trace_buffers::set_cpu_mask(mask);
      return 0;
    }
    case XEN_SYSCTL_TBUFOP_set_evt_mask: trace_buffers::set_event_mask(op.evt_mask); return 0;
    case XEN_SYSCTL_TBUFOP_set_size: return trace_buffers::set_size(op.size);
    case XEN_SYSCTL_TBUFOP_enable: return trace_buffers::enable();
    case XEN_SYSCTL_TBUFOP_disable: return trace_buffers::disable();
    default: return -XEN_EINVAL;
  }
}

long perfc_op(Vcpu& vcpu, xen_sysctl_perfc_op& op) {
  switch (op.cmd) {
    case XEN_SYSCTL_PERFCOP_query: return perfc_query(vcpu, op);
    case XEN_SYSCTL_PERFCOP_reset:
      perf::reset();
      return 0;
    default: return -XEN_EINVAL;
  }
}
}  // namespace

long sysctl(Vcpu& vcpu, TrapFrame&, Arguments& args) {
  // Xen's do_sysctl order: copy in, interface version, then the privilege check (XSM_PRIV).
  xen_sysctl_t request;
  if (!guest_memory::read(vcpu, args.a[0], request)) return -XEN_EFAULT;
  if (request.interface_version != XEN_SYSCTL_INTERFACE_VERSION) return -XEN_EACCES;
  if (!vcpu.domain->privileged) return -XEN_EPERM;
  long result;
  switch (request.cmd) {
    case XEN_SYSCTL_perfc_op: result = perfc_op(vcpu, request.u.perfc_op); break;
    case XEN_SYSCTL_tbuf_op: result = tbuf_op(vcpu, request.u.tbuf_op); break;
    case sysctl_pvhv_audit: {
      writable_page_tables::reattach_all(*vcpu.domain);  // detached tables count as validated
      frame_audit::Result audit = frame_audit::run_and_report();
      return audit.ran ? long(audit.mismatches) : -XEN_ENOMEM;
    }
    default: return -XEN_ENOSYS;
  }
  if (result == 0 && !guest_memory::write(vcpu, args.a[0], request)) return -XEN_EFAULT;
  return result;
}
}  // namespace hypercall
