// HYPERVISOR_sysctl: system-wide control operations for dom0's tools, refused (-EPERM) for
// any other domain, with Xen 4.17's structures (xen/sysctl.h, interface version 0x15).
// Served: readconsole (the console ring), getdomaininfolist, physinfo, cputopoinfo, getcpuinfo
// (control/cpu_topology.h), sched_id, perfc_op
// (software performance counters), tbuf_op (trace buffers) and our frame-table audit
// (sysctl_pvhv_audit). Anything else is Xen's arch_do_sysctl answer, -ENOSYS.
#include "control/control_abi.h"
#include "arch/x86/cpu/registers.h"
#include "memory/frame_allocator.h"
#include "console/console.h"
#include "console/console_ring.h"
#include "control/domctl_rules.h"
#include "control/physinfo.h"
#include "control/cpu_topology.h"
#include "arch/x86/platform/smp_boot.h"
#include "time/idle_time.h"
#include "domain/domain.h"
#include "hypercall/domain_control.h"
#include "memory/boot_memory.h"
#include "memory/machine.h"
#include "time/clock.h"
#include "hypercall/dispatch.h"
#include "perf/perf_counters.h"
#include "domain/guest_memory.h"
#include "tracing/control/trace_control.h"
#include "tracing/trace_buffers.h"
#include "domain/frame_audit.h"
#include "domain/writable_page_tables_glue.h"

namespace hypercall {
// Ours, outside Xen's sysctl numbering (which ends below 64): run the frame-table audit now
// and return the number of frames whose counts disagree with the page tables (0: clean).
constexpr uint32_t sysctl_pvhv_audit = 0x8000;

namespace {
constexpr unsigned counter_count = unsigned(perf::Counter::count);

// Every counter has one value for the machine (not per CPU; with sched_smp=1 the IPI handlers'
// increments may race and lose one); values are 32-bit as in Xen's ABI.
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
long control_trace_buffers(Vcpu& vcpu, xen_sysctl_tbuf_op& op) {
  switch (op.cmd) {
    case XEN_SYSCTL_TBUFOP_get_info: {
      trace_control::Info info = trace_control::info();
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
      trace_control::set_cpu_mask(mask);
      return 0;
    }
    case XEN_SYSCTL_TBUFOP_set_evt_mask: trace_buffers::set_event_mask(op.evt_mask); return 0;
    case XEN_SYSCTL_TBUFOP_set_size: return trace_control::set_size(op.size);
    case XEN_SYSCTL_TBUFOP_enable: return trace_control::enable();
    case XEN_SYSCTL_TBUFOP_disable: return trace_control::disable();
    default: return -XEN_EINVAL;
  }
}

// The guest's hypercalls are the one trace site that is a table, not a NOP (dispatch.cpp): it
// follows the trace points whenever an operation may have switched them.
long tbuf_op(Vcpu& vcpu, xen_sysctl_tbuf_op& op) {
  const long result = control_trace_buffers(vcpu, op);
  if constexpr (trace_points::compiled_in) trace_guest_calls(trace_buffers::recording());
  return result;
}

// Xen's read_console_ring: up to `count` bytes from the consumer (or from `index` when
// incremental), the index where the read stopped, and with `clear` the consumer moved there.
long read_console(Vcpu& vcpu, xen_sysctl_readconsole& op) {
  console::ConsoleRing& ring = console::ring();
  console::ConsoleRing::Read read = ring.plan_read(op.incremental, op.index, op.count);
  uint64_t buffer = uint64_t(op.buffer.p);
  uint32_t copied = 0;
  for (unsigned i = 0; i < read.piece_count; ++i) {
    const console::ConsoleRing::Piece& piece = read.pieces[i];
    if (!guest_memory::copy_to(vcpu, buffer + copied, piece.bytes, piece.length)) return -XEN_EFAULT;
    copied += piece.length;
  }
  if (op.clear) ring.consume_to(read.end);
  op.count = read.total;
  op.index = read.end;
  return 0;
}

// The domains from first_domain on, at most max_domains of them, each as getdomaininfo.
long domain_info_list(Vcpu& vcpu, xen_sysctl_getdomaininfolist& op) {
  domain_control::DomainList domains_now;
  domain_control::list(domains_now);
  uint32_t written = 0;
  for (int i = control::first_at_or_after(domains_now.view, op.first_domain);
       i != control::no_domain && unsigned(i) < domains_now.view.count && written < op.max_domains; ++i) {
    xen_domctl_getdomaininfo info;
    domain_control::describe(*domains::find(domains_now.ids[i]), info);
    if (!guest_memory::write(vcpu, uint64_t(op.buffer.p) + uint64_t(written) * sizeof(info), info)) return -XEN_EFAULT;
    ++written;
  }
  op.num_domains = written;
  return 0;
}

// RAM pages of the firmware's memory map, as Xen's setup counts total_pages.
uint64_t ram_pages() {
  constexpr uint32_t e820_ram = 1;
  uint64_t pages = 0;
  for (unsigned i = 0; i < machine::e820_count(); ++i)
    if (machine::e820()[i].type == e820_ram) pages += machine::e820()[i].size >> 12;
  return pages;
}

// Xen's featureset words 0..7: CPUID 1 EDX and ECX, 0x80000001 EDX and ECX, 0xd.1 EAX,
// 7.0 EBX and ECX, 0x80000007 EDX (zero where the leaf does not exist).
void feature_words(uint32_t (&words)[8]) {
  uint32_t max_basic = cpu::cpuid(0).eax, max_extended = cpu::cpuid(0x80000000).eax;
  cpu::CpuidResult basic = cpu::cpuid(1);
  words[0] = basic.edx;
  words[1] = basic.ecx;
  if (max_extended >= 0x80000001) {
    cpu::CpuidResult extended = cpu::cpuid(0x80000001);
    words[2] = extended.edx;
    words[3] = extended.ecx;
  }
  if (max_basic >= 0xd) words[4] = cpu::cpuid(0xd, 1).eax;
  if (max_basic >= 7) {
    cpu::CpuidResult leaf7 = cpu::cpuid(7, 0);
    words[5] = leaf7.ebx;
    words[6] = leaf7.ecx;
  }
  if (max_extended >= 0x80000007) words[7] = cpu::cpuid(0x80000007).edx;
}

// The machine's CPUs as Xen derives their places: CPUID's topology shifts (the same on every
// CPU QEMU gives) applied to each present CPU's APIC id (the MADT's, for one maxcpus= left down).
control::CpuPlace cpu_places[CpuMask::capacity];
control::CpuTopology machine_topology() {
  control::TopologyCpuid id;
  id.max_basic_leaf = cpu::cpuid(0).eax;
  cpu::CpuidResult leaf1 = cpu::cpuid(1);
  id.leaf1_ebx = leaf1.ebx;
  id.leaf1_edx = leaf1.edx;
  if (id.max_basic_leaf >= 4) id.leaf4_eax = cpu::cpuid(4, 0).eax;
  if (id.max_basic_leaf >= 0xb) {
    cpu::CpuidResult smt = cpu::cpuid(0xb, 0), core = cpu::cpuid(0xb, 1);
    id.leafb0_eax = smt.eax;
    id.leafb0_ebx = smt.ebx;
    id.leafb0_ecx = smt.ecx;
    id.leafb1_eax = core.eax;
    id.leafb1_ebx = core.ebx;
    id.leafb1_ecx = core.ecx;
  }
  control::TopologyShifts shifts = control::topology_shifts(id);
  control::CpuTopology topology;
  topology.online = smp_boot::online_mask();
  topology.possible = smp_boot::possible_cpus();
  topology.present = CpuMask::first(topology.possible) | topology.online;
  for_each_cpu(topology.present,
               [&](unsigned cpu) { cpu_places[cpu] = control::place_of(smp_boot::apic_id_of(cpu), shifts); });
  topology.places = cpu_places;
  return topology;
}

// XEN_SYSCTL_cputopoinfo: a null handle asks for the count; else up to num_cpus entries.
long cputopoinfo(Vcpu& vcpu, xen_sysctl_cputopoinfo& op) {
  control::CpuTopology topology = machine_topology();
  uint64_t handle = uint64_t(op.cputopo.p);
  control::CputopoPlan plan = control::plan_cputopoinfo(topology, op.num_cpus, handle == 0);
  for (uint32_t cpu = 0; cpu < plan.write; ++cpu) {
    xen_sysctl_cputopo_t entry = control::cputopo_entry(topology, cpu);
    if (!guest_memory::write(vcpu, handle + uint64_t(cpu) * sizeof(entry), entry)) return -XEN_EFAULT;
  }
  op.num_cpus = plan.answered;
  return 0;
}

// XEN_SYSCTL_getcpuinfo: each CPU's idle time (time/idle_time.h), up to max_cpus of them.
long getcpuinfo(Vcpu& vcpu, xen_sysctl_getcpuinfo& op) {
  control::CpuTopology topology = machine_topology();
  uint32_t count = control::getcpuinfo_count(topology, op.max_cpus);
  uint64_t handle = uint64_t(op.info.p), now = system_clock::now_ns();
  for (uint32_t cpu = 0; cpu < count; ++cpu) {
    xen_sysctl_cpuinfo_t info{topology.online.contains(cpu) ? idle_time::total_ns(cpu, now) : 0};
    if (!guest_memory::write(vcpu, handle + uint64_t(cpu) * sizeof(info), info)) return -XEN_EFAULT;
  }
  op.nr_cpus = count;
  return 0;
}

void physinfo(xen_sysctl_physinfo& op) {
  control::MachineFacts facts;
  facts.cpu_khz = uint32_t(system_clock::tsc_hz() / 1000);
  facts.total_pages = ram_pages();
  facts.free_pages = boot_memory::allocator().free_count();
  facts.max_mfn = machine::nr_frames() - 1;
  feature_words(facts.hw_cap);
  control::fill_physinfo(facts, op);
  control::fill_physinfo_cpus(machine_topology(), op);
}

long perfc_op(Vcpu& vcpu, xen_sysctl_perfc_op& op) {
  switch (op.cmd) {
    case XEN_SYSCTL_PERFCOP_query: return perfc_query(vcpu, op);
    case XEN_SYSCTL_PERFCOP_reset: perf::reset(); return 0;
    default: return -XEN_EINVAL;
  }
}
}  // namespace

long sysctl(Vcpu& vcpu, TrapFrame&, Arguments& args) {
  // Xen's do_sysctl order: copy in, interface version, then the privilege check (XSM_PRIV).
  xen_sysctl_t request;
  if (!guest_memory::read(vcpu, args.a[0], request)) return -XEN_EFAULT;
  if (long error = control::check_sysctl_version(request.interface_version)) return error;
  if (!vcpu.domain->privileged) return -XEN_EPERM;
  long result;
  switch (request.cmd) {
    case XEN_SYSCTL_readconsole: result = read_console(vcpu, request.u.readconsole); break;
    case XEN_SYSCTL_getdomaininfolist: result = domain_info_list(vcpu, request.u.getdomaininfolist); break;
    case XEN_SYSCTL_physinfo:
      physinfo(request.u.physinfo);
      result = 0;
      break;
    // Xen 4.17's default scheduler (credit2) is what its sysctl reports; ours is a round robin
    // with 10 ms slices and serves no scheduler_op, but tools pick their paths by this id.
    case XEN_SYSCTL_sched_id:
      request.u.sched_id.sched_id = XEN_SCHEDULER_CREDIT2;
      result = 0;
      break;
    case XEN_SYSCTL_cputopoinfo: result = cputopoinfo(vcpu, request.u.cputopoinfo); break;
    case XEN_SYSCTL_getcpuinfo: result = getcpuinfo(vcpu, request.u.getcpuinfo); break;
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
