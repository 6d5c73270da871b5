// The PV MMU hypercalls: mmu_update, mmuext_op, update_va_mapping (and _otherdomain). Requests are copied
// out of guest memory and handed to the pure rules in mm/; what those say the hardware must
// do (CR3 loads, flushes) is applied before returning.
#include "mm/xen_abi.h"
#include <xen/errno.h>
#include <xen/xen.h>
#include "domain/domain.h"
#include "domain/domain_mmu.h"
#include "hypercall/dispatch.h"
#include "hypervisor/perf_counters.h"
#include "mm/mmu_update.h"
#include "mm/mmuext_op.h"
#include "mm/page_owner.h"
#include "mm/va_mapping.h"
#include "pv/guest_memory.h"
#include "ptwr/writable_page_tables_glue.h"

namespace hypercall {
namespace {
bool domain_exists(domid_t id) { return domains::find(id) != nullptr; }

// The page owner a hypercall names (Xen's get_pg_owner): naming oneself or a domain that does
// not exist is -ESRCH. Who may name whom is each hypercall's own XSM check.
mm::PageOwnerResult named_owner(const Vcpu& vcpu, uint32_t foreigndom) {
  if (foreigndom == DOMID_SELF) return mm::PageOwnerResult{};  // nearly every call
  return mm::resolve_page_owner(domain_mmu::identity(*vcpu.domain), foreigndom, domain_exists);
}

// mmu_update's and mmuext_op's `foreigndom`, with Xen's default XSM policy: naming DOMID_XEN
// or another domain is -EPERM for an unprivileged caller, on its first request (so an empty
// batch succeeds). Returns 0 and the page owner, or the error.
long page_owner(const Vcpu& vcpu, uint64_t foreigndom, uint64_t count, domid_t& owner) {
  mm::PageOwnerResult result = named_owner(vcpu, uint32_t(foreigndom));
  if (result.error) return result.error;
  if (result.needs_privilege && !vcpu.domain->privileged && count != 0) return -XEN_EPERM;
  owner = result.owner;
  return 0;
}

// Xen's MMU_UPDATE_PREEMPTED: bit 31 of the (32-bit) count marks the continuation of a batch
// that was preempted; `done` then already holds what the earlier parts completed.
constexpr uint32_t count_preempted = 0x80000000u;

// Writes the count of completed requests when the guest asked for it.
long finish(Vcpu& vcpu, uint64_t done_pointer, uint32_t done, long result) {
  if (done_pointer && !guest_memory::write(vcpu, done_pointer, done)) return -XEN_EFAULT;
  return result;
}

// The requests at args.a[0], args.a[1] of them (32 bits, as Xen's `unsigned int count`), the
// completed count written to args.a[2]. Preemptible: a batch stopped part way rewrites its
// arguments to continue with the rest.
template <typename Request, typename Run>
long run_batch(Vcpu& vcpu, Arguments& args, Run run, domid_t page_owner = DOMID_SELF) {
  const uint64_t list = args.a[0], done_pointer = args.a[2];
  uint32_t count = uint32_t(args.a[1]);
  uint32_t done = 0;
  if (count & count_preempted) {
    count &= ~count_preempted;
    if (done_pointer) (void)guest_memory::read(vcpu, done_pointer, done);
  }
  mm::MmuContext context = domain_mmu::context(*vcpu.domain);
  context.page_owner = page_owner;
  uint32_t i = 0;
  long result = 0;
  for (; i < count; ++i) {
    if (i && preemption_requested()) {
      result = restart;
      break;
    }
    Request request;
    if (!guest_memory::read(vcpu, list + uint64_t(i) * sizeof(Request), request)) {
      result = -XEN_EFAULT;
      break;
    }
    if ((result = run(context, request))) break;
  }
  domain_mmu::apply_effects(context.effects);
  if (result == restart) {
    args.a[0] = list + uint64_t(i) * sizeof(Request);
    args.a[1] = (count - i) | count_preempted;
  }
  return finish(vcpu, done_pointer, done + i, result);
}

long apply_va_flags(Vcpu& vcpu, uint64_t va, uint64_t flags) {
  mm::MmuEffects effects;
  switch (flags & UVMF_FLUSHTYPE_MASK) {
    case UVMF_NONE: break;
    case UVMF_TLB_FLUSH: effects.flush_local_tlb = true; break;
    case UVMF_INVLPG:
      effects.invalidate_page_local = true;
      effects.invalidate_address = va;
      break;
    default: return -XEN_EINVAL;
  }
  domain_mmu::apply_effects(effects);
  return 0;
}
}  // namespace

long mmu_update(Vcpu& vcpu, TrapFrame&, Arguments& args) {
  perf::add(perf::Counter::mmu_hypercalls);
  writable_page_tables::reattach_all(*vcpu.domain);  // MMU operations see validated tables
  domid_t owner = DOMID_SELF;
  if (long rc = page_owner(vcpu, args.a[3], uint32_t(args.a[1]), owner)) return finish(vcpu, args.a[2], 0, rc);
  return run_batch<mmu_update_t>(
      vcpu, args,
      [](mm::MmuContext& context, const mmu_update_t& request) { return mm::mmu_update(context, request); },
      owner);
}

long mmuext_op(Vcpu& vcpu, TrapFrame&, Arguments& args) {
  perf::add(perf::Counter::mmu_hypercalls);
  writable_page_tables::reattach_all(*vcpu.domain);  // MMU operations see validated tables
  domid_t owner = DOMID_SELF;
  if (long rc = page_owner(vcpu, args.a[3], uint32_t(args.a[1]), owner)) return finish(vcpu, args.a[2], 0, rc);
  // Extended operations on another domain's tables or frames are the toolstack's, not served.
  if (owner != DOMID_SELF) return finish(vcpu, args.a[2], 0, -XEN_ESRCH);
  return run_batch<mmuext_op_t>(vcpu, args,
                                [&vcpu](mm::MmuContext& context, const mmuext_op_t& op) {
                                  return mm::mmuext_op(context, vcpu.bases, op);
                                });
}

namespace {
long map_va(Vcpu& vcpu, uint64_t va, uint64_t value, uint64_t flags, domid_t page_owner) {
  perf::add(perf::Counter::mmu_hypercalls);
  writable_page_tables::reattach_all(*vcpu.domain);  // MMU operations see validated tables
  if ((flags & UVMF_FLUSHTYPE_MASK) > UVMF_INVLPG) return -XEN_EINVAL;
  mm::MmuContext context = domain_mmu::context(*vcpu.domain);
  context.page_owner = page_owner;
  uint64_t table = vcpu.active_table_mfn();
  int rc = mm::update_va_mapping(context, table, va, value);
  domain_mmu::apply_effects(context.effects);
  if (rc) return rc;
  return apply_va_flags(vcpu, va, flags);
}
}  // namespace

long update_va_mapping(Vcpu& vcpu, TrapFrame&, Arguments& args) {
  return map_va(vcpu, args.a[0], args.a[1], args.a[2], DOMID_SELF);
}

// As Xen's: the page owner is resolved like mmu_update's foreigndom, and the default XSM
// policy (xsm_update_va_mapping) asks privilege for any other owner, DOMID_IO included, but
// only when the new entry is present.
long update_va_mapping_otherdomain(Vcpu& vcpu, TrapFrame&, Arguments& args) {
  mm::PageOwnerResult owner = named_owner(vcpu, domid_t(args.a[3]));
  if (owner.error) return owner.error;
  bool foreign = owner.owner != DOMID_SELF;
  bool present = args.a[1] & 1;
  if (foreign && present && !vcpu.domain->privileged) return -XEN_EPERM;
  return map_va(vcpu, args.a[0], args.a[1], args.a[2], owner.owner);
}
}  // namespace hypercall
