// HYPERVISOR_domctl: the control domain's operations on domains, with Xen 4.17's structures
// (xen/domctl.h, interface version 0x15) and answers. The rules are pure (control/); this is
// the glue: copy in, look up, apply to the Domain, copy back where Xen copies back.
// Served: createdomain, destroydomain, getdomaininfo, pausedomain / unpausedomain, max_mem,
// max_vcpus, setdomainhandle, getvcpuinfo, setvcpuaffinity / getvcpuaffinity, setvcpucontext / getvcpucontext,
// set_address_size / get_address_size, hypercall_init (hypercall/domain_lifecycle), and ours, outside Xen's numbers:
// the ptwr mode (hypercall/ptwr_mode_switch). Xen's other sub-ops are
// -EOPNOTSUPP, numbers it does not know -ENOSYS.
#include "control/control_abi.h"
#include "control/domctl_rules.h"
#include "control/vcpu_context.h"
#include "control/vcpu_affinity.h"
#include "arch/x86/platform/smp_boot.h"
#include "domain/domain.h"
#include "hypercall/domain_control.h"
#include "hypercall/domain_lifecycle.h"
#include "hypercall/ptwr_mode_switch.h"
#include "sched/scheduler.h"
#include "hypercall/dispatch.h"
#include "domain/guest_memory.h"

namespace hypercall {
namespace {
// 4.17: the domain asked for, or the first one above it.
long get_domain_info(xen_domctl_t& op) {
  domain_control::DomainList domains_now;
  domain_control::list(domains_now);
  control::Selection selection = control::select_for_getdomaininfo(domains_now.view, op.domain);
  if (selection.error) return selection.error;
  Domain& domain = *domains::find(domains_now.ids[selection.index]);
  domain_control::describe(domain, op.u.getdomaininfo);
  op.domain = op.u.getdomaininfo.domain;
  return 0;
}

long get_vcpu_info(Domain& domain, xen_domctl_getvcpuinfo& info) {
  if (long error = control::check_vcpu_index(info.vcpu, domain.max_vcpus, domain.vcpu(info.vcpu) != nullptr))
    return error;
  const Vcpu& vcpu = *domain.vcpu(info.vcpu);
  info.online = vcpu.initialised && vcpu.online;  // Xen: not VPF_down
  info.blocked = vcpu.blocked;
  info.running = scheduler::on_cpu(vcpu);
  info.cpu_time = scheduler::running_ns(vcpu);
  info.cpu = vcpu.processor;
  return 0;
}

// A guest bitmap as a CPU mask (Xen's xenctl_bitmap_to_bitmap over nr_cpu_ids bits).
long read_cpu_bitmap(Vcpu& caller, const xenctl_bitmap& bitmap, uint32_t nr_cpu_ids, CpuMask& mask) {
  uint8_t bytes[CpuMask::capacity / 8] = {};
  uint32_t count = control::bitmap_read_bytes(bitmap.nr_bits, nr_cpu_ids);
  if (count > sizeof(bytes)) count = sizeof(bytes);
  if (count && !guest_memory::copy_from(caller, bytes, uint64_t(bitmap.bitmap.p), count)) return -XEN_EFAULT;
  mask = control::mask_from_bitmap(bytes, bitmap.nr_bits, nr_cpu_ids);
  return 0;
}

// A CPU mask into a guest bitmap of its nr_bits (Xen's bitmap_to_xenctl_bitmap: our
// nr_cpu_ids bits, then zero bytes to the end of the caller's bitmap).
long write_cpu_bitmap(Vcpu& caller, const xenctl_bitmap& bitmap, uint32_t nr_cpu_ids, CpuMask mask) {
  const uint64_t address = uint64_t(bitmap.bitmap.p);
  const uint32_t total = control::bitmap_write_bytes(bitmap.nr_bits);
  uint8_t chunk[64];
  control::bitmap_from_mask(mask, nr_cpu_ids, chunk, sizeof(chunk));  // CpuMask's 64 CPUs fit in 8 bytes
  for (uint32_t done = 0; done < total;) {
    uint32_t count = total - done < sizeof(chunk) ? total - done : uint32_t(sizeof(chunk));
    if (!guest_memory::copy_to(caller, address + done, chunk, count)) return -XEN_EFAULT;
    if (done == 0) __builtin_memset(chunk, 0, sizeof(chunk));
    done += count;
  }
  return 0;
}

// XEN_DOMCTL_setvcpuaffinity / getvcpuaffinity (control/vcpu_affinity.h), in Xen's order: the
// hard mask read, checked, applied and answered, then the soft one; a soft bitmap that cannot be
// read puts the old hard mask back. An answer that cannot be written is -EFAULT after the change.
long vcpu_affinity(Vcpu& caller, Domain& target, uint32_t cmd, xen_domctl_vcpuaffinity& request) {
  Vcpu* vcpu = target.vcpu(request.vcpu);
  if (long error = control::check_vcpu_affinity_request(request.vcpu, target.max_vcpus, vcpu != nullptr, request.flags,
                                                        request.cpumap_hard.bitmap.p == nullptr,
                                                        request.cpumap_soft.bitmap.p == nullptr))
    return error;
  const uint32_t nr_cpu_ids = smp_boot::possible_cpus();
  const bool hard = request.flags & XEN_VCPUAFFINITY_HARD, soft = request.flags & XEN_VCPUAFFINITY_SOFT;
  long result = 0;
  if (cmd == XEN_DOMCTL_getvcpuaffinity) {
    if (hard) result = write_cpu_bitmap(caller, request.cpumap_hard, nr_cpu_ids, vcpu->hard_affinity);
    if (soft) result = write_cpu_bitmap(caller, request.cpumap_soft, nr_cpu_ids, vcpu->soft_affinity);
    return result;
  }
  const CpuMask online = smp_boot::online_mask(), old_hard = vcpu->hard_affinity;
  if (hard) {
    CpuMask given;
    if (long error = read_cpu_bitmap(caller, request.cpumap_hard, nr_cpu_ids, given)) return error;
    control::AffinityChange change =
        control::set_vcpu_affinity(vcpu->hard_affinity, vcpu->soft_affinity, XEN_VCPUAFFINITY_HARD, given, {}, online);
    if (change.error) return change.error;
    vcpu->hard_affinity = change.hard;
    result = write_cpu_bitmap(caller, request.cpumap_hard, nr_cpu_ids, change.hard_out);
  }
  if (soft) {
    CpuMask given;
    if (long error = read_cpu_bitmap(caller, request.cpumap_soft, nr_cpu_ids, given)) {
      vcpu->hard_affinity = old_hard;
      return error;
    }
    control::AffinityChange change =
        control::set_vcpu_affinity(vcpu->hard_affinity, vcpu->soft_affinity, XEN_VCPUAFFINITY_SOFT, {}, given, online);
    vcpu->soft_affinity = change.soft;
    result = write_cpu_bitmap(caller, request.cpumap_soft, nr_cpu_ids, change.soft_out);
  }
  // A vCPU whose CPU the new hard affinity excludes moves (Xen's vcpu_set_hard_affinity).
  if (vcpu->hard_affinity.bits() != old_hard.bits()) scheduler::set_hard_affinity(*vcpu, vcpu->hard_affinity);
  return result;
}

long create_domain(xen_domctl_t& op) {
  Domain* created = nullptr;
  if (long error = domain_lifecycle::create(op.domain, op.u.createdomain, created)) return error;
  op.domain = created->id;
  op.u.createdomain.flags = created->config.flags;  // as Xen, which adds oos_off for PV in place
  return 0;
}

// The context is 5 KiB: kept off the hypervisor stack. Shared: used under the hypervisor lock
// (sched/hypervisor_lock: one CPU at a time in the hypervisor), which nothing that uses it lets
// go meanwhile, and domctl does not nest.
vcpu_guest_context context_buffer;

// setvcpucontext: -EINVAL on the caller's own domain (Xen has no domain_pause of itself) or a
// vCPU the target does not have (beyond max_vcpus, or not made by max_vcpus); a null handle
// resets the vCPU (Xen's vcpu_reset), else the context is copied in (-EFAULT) and applied.
long set_vcpu_context(Vcpu& caller, Domain& target, const xen_domctl_vcpucontext& request) {
  Vcpu* vcpu = target.vcpu(request.vcpu);
  if (&target == caller.domain || !vcpu) return -XEN_EINVAL;
  uint64_t handle = uint64_t(reinterpret_cast<uintptr_t>(request.ctxt.p));
  if (handle == 0) return domain_lifecycle::reset_vcpu(*vcpu);
  if (!guest_memory::read(caller, handle, context_buffer)) return -XEN_EFAULT;
  return domain_lifecycle::set_vcpu_context(*vcpu, context_buffer);
}

// getvcpucontext: -EINVAL for a vCPU the target does not have and for the caller's own vCPU
// (Xen has no vcpu_pause of itself; another vCPU of the caller's domain is fine), -ENODATA
// before the vCPU has a context, -EFAULT when the context cannot be copied out.
long get_vcpu_context(Vcpu& caller, Domain& target, const xen_domctl_vcpucontext& request) {
  const Vcpu* vcpu = target.vcpu(request.vcpu);
  if (!vcpu || vcpu == &caller) return -XEN_EINVAL;
  if (long error = domain_lifecycle::get_vcpu_context(*vcpu, context_buffer)) return error;
  uint64_t handle = uint64_t(reinterpret_cast<uintptr_t>(request.ctxt.p));
  return guest_memory::write(caller, handle, context_buffer) ? 0 : -XEN_EFAULT;
}

// Ours: the request lies in the union's padding, copied out and back (no aliasing of it).
long ptwr_mode(Domain& target, xen_domctl_t& op) {
  pvhv::xen_abi::DomctlPtwrMode request;
  static_assert(sizeof(request) <= sizeof(op.u.pad));
  __builtin_memcpy(&request, op.u.pad, sizeof(request));
  long result = ptwr_mode_switch::apply(target, request);
  __builtin_memcpy(op.u.pad, &request, sizeof(request));
  return result;
}

long run(Vcpu& caller, xen_domctl_t& op, Domain* target) {
  const bool on_itself = target == caller.domain;
  switch (op.cmd) {
    case XEN_DOMCTL_getdomaininfo: return get_domain_info(op);
    case XEN_DOMCTL_pausedomain:
      if (long error = control::check_not_self(on_itself)) return error;
      return domain_control::pause(*target);
    case XEN_DOMCTL_unpausedomain: return domain_control::unpause(*target);
    case XEN_DOMCTL_max_mem: target->max_pages = control::max_pages_from_kb(op.u.max_mem.max_memkb); return 0;
    case XEN_DOMCTL_max_vcpus:  // the number createdomain was given: the vCPUs are made now
      if (long error = control::check_max_vcpus(on_itself, op.u.max_vcpus.max, target->max_vcpus)) return error;
      return domain_lifecycle::create_vcpus(*target);
    case XEN_DOMCTL_setdomainhandle:
      __builtin_memcpy(target->handle, op.u.setdomainhandle.handle, sizeof(target->handle));
      return 0;
    case XEN_DOMCTL_getvcpuinfo: return get_vcpu_info(*target, op.u.getvcpuinfo);
    case XEN_DOMCTL_setvcpuaffinity:
    case XEN_DOMCTL_getvcpuaffinity: return vcpu_affinity(caller, *target, op.cmd, op.u.vcpuaffinity);
    case XEN_DOMCTL_createdomain: return create_domain(op);
    case XEN_DOMCTL_destroydomain: return domain_lifecycle::destroy(*target, caller.domain, true);
    case XEN_DOMCTL_setvcpucontext: return set_vcpu_context(caller, *target, op.u.vcpucontext);
    case XEN_DOMCTL_getvcpucontext: return get_vcpu_context(caller, *target, op.u.vcpucontext);
    case XEN_DOMCTL_set_address_size: return control::check_address_size(op.u.address_size.size);
    case XEN_DOMCTL_get_address_size: op.u.address_size.size = control::pv_address_size; return 0;
    case XEN_DOMCTL_hypercall_init: return domain_lifecycle::hypercall_init(*target, op.u.hypercall_init.gmfn);
    case pvhv::xen_abi::kDomctlPtwrMode: return ptwr_mode(*target, op);
    default: return control::domctl_unserved_answer(op.cmd);
  }
}
}  // namespace

long domctl(Vcpu& vcpu, TrapFrame&, Arguments& args) {
  xen_domctl_t op;
  if (!guest_memory::read(vcpu, args.a[0], op)) return -XEN_EFAULT;
  domain_lifecycle::reap_dead();
  Domain* target = domains::find(op.domain);
  if (long error = control::domctl_admission(op.interface_version, op.cmd, target != nullptr, vcpu.domain->privileged))
    return error;
  long result = run(vcpu, op, target);
  if (result == 0 && control::domctl_copies_back(op.cmd) && !guest_memory::write(vcpu, args.a[0], op))
    return -XEN_EFAULT;
  return result;
}
}  // namespace hypercall
