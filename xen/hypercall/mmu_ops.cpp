// The PV MMU hypercalls: mmu_update, mmuext_op, update_va_mapping (and _otherdomain). Requests are copied
// out of guest memory and handed to the pure rules in mm/; what those say the hardware must
// do (CR3 loads, flushes) is applied before returning.
#include "abi/xen_abi.h"
#include <xen/errno.h>
#include <xen/xen.h>
#include "domain/domain.h"
#include "domain/domain_mmu.h"
#include "hypercall/dispatch.h"
#include "perf/perf_counters.h"
#include "mm/mmu_update.h"
#include "mm/mmuext_op.h"
#include "mm/page_owner.h"
#include "mm/va_mapping.h"
#include "mm/vcpu_bitmap.h"
#include "arch/x86/cpu/per_cpu.h"
#include "memory/boot_memory.h"
#include "domain/guest_memory.h"
#include "domain/writable_page_tables_glue.h"

namespace hypercall {
namespace {
bool domain_exists(domid_t id) { return domains::find(id) != nullptr; }

// The page owner a hypercall names (Xen's get_pg_owner): naming oneself or a domain that does
// not exist is -ESRCH. Who may name whom is each hypercall's own XSM check.
[[gnu::noinline]] mm::PageOwnerResult named_foreign_owner(const Vcpu& vcpu, uint32_t foreigndom) {
  return mm::resolve_page_owner(domain_mmu::identity(*vcpu.domain), foreigndom, domain_exists);
}
[[gnu::always_inline]] inline mm::PageOwnerResult named_owner(const Vcpu& vcpu, uint32_t foreigndom) {
  if (foreigndom == DOMID_SELF) [[likely]]
    return mm::PageOwnerResult{};  // nearly every call
  return named_foreign_owner(vcpu, foreigndom);
}

// Whose tables a batch updates and whose frames it maps (mmu_update's `foreigndom`).
struct Target {
  Domain* tables = nullptr;          // the caller, or the domain named by pt_dom
  domid_t page_owner = DOMID_SELF;   // for MmuContext::page_owner
  bool refused_before_done = false;  // the refusal leaves `done` unwritten (PageOwnerResult)
};

// mmu_update's `foreigndom`, with Xen's default XSM policy (XSM_TARGET for both the page
// owner and the table owner, DOMID_IO exempt): naming DOMID_XEN or another domain is -EPERM
// for an unprivileged caller, on its first request (so an empty batch succeeds).
long mmu_target(Vcpu& vcpu, uint64_t foreigndom, uint64_t count, Target& target) {
  mm::PageOwnerResult result = named_owner(vcpu, uint32_t(foreigndom));
  if (result.error) {
    target.refused_before_done = result.table_owner_missing;
    return result.error;
  }
  if (result.needs_privilege && !vcpu.domain->privileged && count != 0) return -XEN_EPERM;
  target.tables = result.table_owner == DOMID_SELF ? vcpu.domain : domains::find(result.table_owner);
  if (!target.tables) return -XEN_ESRCH;
  target.page_owner = result.owner;
  // DOMID_SELF always means the caller's frames, also in another domain's tables.
  if (target.tables != vcpu.domain && target.page_owner == DOMID_SELF) target.page_owner = vcpu.domain->id;
  return 0;
}

// mmuext_op's `foreigndom` (16 bits: get_pg_owner's domid_t), checked before any operation as
// Xen's xsm_mmuext_op(XSM_TARGET): another domain, DOMID_IO or DOMID_XEN is -EPERM for an
// unprivileged caller even in an empty batch. The control domain may name a guest domain;
// DOMID_IO and DOMID_XEN own no page tables here (-ESRCH, not served).
long mmuext_target(Vcpu& vcpu, uint64_t foreigndom, Domain*& target) {
  mm::PageOwnerResult result = named_owner(vcpu, uint16_t(foreigndom));
  if (result.error) return result.error;
  if (result.owner == DOMID_SELF) {
    target = vcpu.domain;
    return 0;
  }
  if (!vcpu.domain->privileged) return -XEN_EPERM;
  target = mm::is_guest_domain(result.owner) ? domains::find(result.owner) : nullptr;
  return target ? 0 : -XEN_ESRCH;
}

// A pin on behalf of a dying domain (Xen's do_mmuext_op, "we can race domain destruction"):
// its teardown unpins only once, so a pin taken now would hold the frame, and the domain,
// forever. As Xen, the pin is taken (its checks and answer are the same) and dropped at once.
long pin_for(mm::MmuContext& context, Domain& target, const mmuext_op_t& op) {
  long rc = mm::mmuext_op(context, target.vcpus[0].bases, op);
  if (rc == 0 && target.dying()) {
    mmuext_op_t unpin{};
    unpin.cmd = MMUEXT_UNPIN_TABLE;
    unpin.arg1.mfn = op.arg1.mfn;
    (void)mm::mmuext_op(context, target.vcpus[0].bases, unpin);
  }
  return rc;
}

// What mmuext_op does on another domain's behalf (Xen's do_mmuext_op with pg_owner != currd):
// pin and unpin its tables; base pointers, flushes and LDTs are the caller's own (-EPERM).
long foreign_mmuext(mm::MmuContext& context, Domain& target, const mmuext_op_t& op) {
  switch (op.cmd) {
    case MMUEXT_PIN_L1_TABLE:
    case MMUEXT_PIN_L2_TABLE:
    case MMUEXT_PIN_L3_TABLE:
    case MMUEXT_PIN_L4_TABLE: return pin_for(context, target, op);
    case MMUEXT_UNPIN_TABLE: return mm::mmuext_op(context, target.vcpus[0].bases, op);
    case MMUEXT_NEW_BASEPTR:
    case MMUEXT_NEW_USER_BASEPTR:
    case MMUEXT_TLB_FLUSH_LOCAL:
    case MMUEXT_INVLPG_LOCAL:
    case MMUEXT_TLB_FLUSH_MULTI:
    case MMUEXT_INVLPG_MULTI:
    case MMUEXT_TLB_FLUSH_ALL:
    case MMUEXT_INVLPG_ALL:
    case MMUEXT_FLUSH_CACHE:
    case MMUEXT_FLUSH_CACHE_GLOBAL:
    case MMUEXT_SET_LDT: return -XEN_EPERM;
    default: return -XEN_ENOSYS;  // CLEAR_PAGE, COPY_PAGE, [UN]MARK_SUPER: not served here either
  }
}

// The CPUs whose TLBs may hold translations of the vCPUs a guest's bitmap names (Xen's
// vcpumask_to_pcpumask): each named vCPU that has run, by the CPU it runs or last ran on.
// False when a word of the bitmap cannot be read; `cpus` is then empty (nothing is flushed).
bool cpus_of_vcpus(const Vcpu& vcpu, uint64_t bitmap, CpuMask& cpus) {
  const Domain& domain = *vcpu.domain;
  cpus = CpuMask{};
  const bool read = mm::for_each_vcpu_in_bitmap(
      domain.max_vcpus,
      [&](uint64_t index, uint64_t& word) { return guest_memory::read(vcpu, bitmap + index * sizeof(word), word); },
      [&](uint32_t id) {
        if (const Vcpu* named = domain.vcpu(id); named != nullptr && named->has_run) cpus.add(named->processor);
      });
  if (!read) cpus = CpuMask{};
  return read;
}

// A guest-directed flush of the TLBs of `cpus`, a whole flush or one page's: this CPU's through
// `effects` (carried out before the guest runs again, as a local flush's), the others' now, by a
// waited cross-CPU call (a whole flush, for a page too).
void flush_cpus(mm::MmuEffects& effects, CpuMask cpus, bool one_page, uint64_t address) {
  const unsigned self = per_cpu::this_cpu();
  if (cpus.contains(self)) {
    if (one_page)
      effects.request_invlpg(address, false);
    else
      effects.flush_local_tlb = true;
  }
  if (const CpuMask others = cpus.without(self); !others.empty()) [[unlikely]]
    boot_memory::flush_tlb_cpus(others);
}

// MMUEXT_TLB_FLUSH_MULTI / MMUEXT_INVLPG_MULTI on the caller's own domain: the vCPUs of the
// bitmap at arg2.vcpumask. A bitmap that cannot be read is -EINVAL, as Xen's do_mmuext_op.
long flush_multi(const Vcpu& vcpu, mm::MmuContext& context, const mmuext_op_t& op) {
  CpuMask cpus;
  if (!cpus_of_vcpus(vcpu, reinterpret_cast<uint64_t>(op.arg2.vcpumask.p), cpus)) return -XEN_EINVAL;
  flush_cpus(context.effects, cpus, op.cmd == MMUEXT_INVLPG_MULTI, op.arg1.linear_addr);
  return 0;
}

// What the requests asked of the hardware. Nothing asked is nothing done, not even a trace
// record (apply_effects records only what it does).
void apply(const mm::MmuEffects& effects) {
  if (effects.any()) domain_mmu::apply_effects(effects);
}

// Xen's MMU_UPDATE_PREEMPTED: bit 31 of the (32-bit) count marks the continuation of a batch
// that was preempted; `done` then already holds what the earlier parts completed.
constexpr uint32_t count_preempted = 0x80000000u;

// Writes the count of completed requests when the guest asked for it.
long finish(Vcpu& vcpu, uint64_t done_pointer, uint32_t done, long result) {
  if (done_pointer && !guest_memory::write(vcpu, done_pointer, done)) return -XEN_EFAULT;
  return result;
}

// What run_batch calls before it reads guest memory and when the batch ends: nothing, or the
// release of what the requests keep held between them (mm::HeldTables).
struct NothingHeld {
  void operator()(mm::MmuContext&) const {}
};

// The requests at args.a[0], args.a[1] of them (32 bits, as Xen's `unsigned int count`), the
// completed count written to args.a[2]. Preemptible: a batch stopped part way rewrites its
// arguments to continue with the rest. The requests are read 256 bytes at a time and then run,
// so that what a request keeps held for the next (`release`) is given back before each read:
// a read may fault into a reattach that takes a frame lock. A request that cannot be read ends
// the batch with -EFAULT after those before it ran, as when each was read just before it ran.
template <typename Request, typename Run, typename Release = NothingHeld>
long run_batch(Vcpu& vcpu, Arguments& args, Run run, Domain& tables, domid_t page_owner = DOMID_SELF,
               Release release = {}) {
  constexpr uint32_t chunk = 256 / sizeof(Request);
  const uint64_t list = args.a[0], done_pointer = args.a[2];
  uint32_t count = uint32_t(args.a[1]);
  uint32_t done = 0;
  if (count & count_preempted) {
    count &= ~count_preempted;
    if (done_pointer) (void)guest_memory::read(vcpu, done_pointer, done);
  }
  mm::MmuContext& context = domain_mmu::reused_context(tables);
  context.page_owner = page_owner;
  context.tables_of_caller = &tables == vcpu.domain;
  // The whole list checked once; a list that is not wholly the guest's is checked request by
  // request (those before the first bad one are done, as Xen's).
  const bool list_reachable = guest_memory::reachable(vcpu, list, uint64_t(count) * sizeof(Request));
  uint32_t i = 0;
  long result = 0;
  while (i < count && result == 0) {
    Request requests[chunk];
    const uint32_t wanted = count - i < chunk ? count - i : chunk;
    uint32_t read = 0;
    release(context);
    for (; read < wanted; ++read) {
      const uint64_t address = list + uint64_t(i + read) * sizeof(Request);
      if (!(list_reachable ? guest_memory::read_reachable(address, requests[read])
                           : guest_memory::read(vcpu, address, requests[read])))
        break;
    }
    for (uint32_t k = 0; k < read; ++k) {
      if ((result = run(context, requests[k]))) break;
      if (++i < count && preemption_requested()) {  // between two requests, never before the first
        result = restart;
        break;
      }
    }
    if (result == 0 && read < wanted) result = -XEN_EFAULT;
  }
  release(context);
  apply(context.effects);
  if (result == restart) {
    args.a[0] = list + uint64_t(i) * sizeof(Request);
    args.a[1] = (count - i) | count_preempted;
  }
  return finish(vcpu, done_pointer, done + i, result);
}

// update_va_mapping's flush after the update, as Xen's: the flush type in the low two bits, and
// above them UVMF_LOCAL (this CPU), UVMF_ALL (every CPU the domain may be cached on) or else a
// pointer to a vCPU bitmap (UVMF_MULTI). `rc` is the update's answer: a refused update's stands
// (the flush is made all the same), else a bitmap that cannot be read is -EFAULT (Xen 4.17's
// answers, tests/integration/guest_abi/test_guest_flush_multi.py).
long apply_va_flags(Vcpu& vcpu, uint64_t va, uint64_t flags, long rc) {
  const uint64_t type = flags & UVMF_FLUSHTYPE_MASK;
  if (type != UVMF_TLB_FLUSH && type != UVMF_INVLPG) return rc;
  const uint64_t bitmap = flags & ~UVMF_FLUSHTYPE_MASK;
  CpuMask cpus;
  if (bitmap == UVMF_LOCAL)
    cpus = CpuMask::only(per_cpu::this_cpu());
  else if (bitmap == UVMF_ALL)
    cpus = domain_mmu::dirty_cpus(*vcpu.domain) | CpuMask::only(per_cpu::this_cpu());
  else if (!cpus_of_vcpus(vcpu, bitmap, cpus) && rc == 0)
    rc = -XEN_EFAULT;
  mm::MmuEffects effects;
  flush_cpus(effects, cpus, type == UVMF_INVLPG, va);
  apply(effects);
  return rc;
}

// Whether update_va_mapping's flags invalidate `va` on this CPU and on every other the domain
// may be cached on (domain_mmu::dirty_cpus): the update may then take back the stamp of the
// drop it makes (mm::update_va_mapping's `invalidated`). A vCPU bitmap is not read here.
bool invalidates_everywhere(const Vcpu& vcpu, uint64_t flags) {
  const uint64_t type = flags & UVMF_FLUSHTYPE_MASK;
  if (type != UVMF_TLB_FLUSH && type != UVMF_INVLPG) return false;
  const uint64_t bitmap = flags & ~UVMF_FLUSHTYPE_MASK;
  if (bitmap == UVMF_ALL) return true;
  return bitmap == UVMF_LOCAL && domain_mmu::runs_here_alone(*vcpu.domain);
}
}  // namespace

namespace {
// A batch of page-table updates, the tables the last ones locked kept for the next (mm::HeldTables).
long run_updates(Vcpu& vcpu, Arguments& args, const Target& target) {
  mm::HeldTables held;
  return run_batch<mmu_update_t>(
      vcpu, args,
      [&held](mm::MmuContext& context, const mmu_update_t& request) -> long {
        return mm::mmu_update(context, request, held);
      },
      *target.tables, target.page_owner, [&held](mm::MmuContext& context) { held.release(context.frames); });
}

// A batch on another domain's tables, or mapping another domain's frames (mmu_update's
// foreigndom): those domains detach nothing meanwhile.
[[gnu::noinline]] long foreign_update(Vcpu& vcpu, Arguments& args, const Target& target, Domain* frames) {
  const bool other_frames = frames != nullptr && frames != vcpu.domain && frames != target.tables;
  writable_page_tables::ForeignUse tables_use(target.tables != vcpu.domain ? target.tables : nullptr);
  writable_page_tables::ForeignUse frames_use(other_frames ? frames : nullptr);
  return run_updates(vcpu, args, target);
}

// One request on the caller's own tables with no count to report: a kernel's single PTE write
// (ours in pte=hypercall mode, Linux's xen_set_pte outside lazy mode). run_batch with count 1
// and no `done` does the same: read the request, run it, apply its effects; without its loop,
// preemption point and continuation, which one request never needs.
long run_one_own_request(Vcpu& vcpu, uint64_t request_address) {
  mmu_update_t request;
  if (!guest_memory::read(vcpu, request_address, request)) return -XEN_EFAULT;
  mm::MmuContext& context = domain_mmu::reused_context(*vcpu.domain);
  const long result = mm::mmu_update(context, request);
  apply(context.effects);
  return result;
}

bool is_one_own_request(const Arguments& args) {
  return uint32_t(args.a[1]) == 1 && args.a[2] == 0 && uint32_t(args.a[3]) == DOMID_SELF;
}

// Xen's guest_handle_okay of a request list, before anything else (its foreigndom included):
// where the list starts must be the guest's (its __addr_ok), else -EFAULT with `done` left as
// it was, even for a count of 0. Where it runs on to is checked as it is read.
bool list_starts_in_guest(const Vcpu& vcpu, uint64_t list) { return guest_memory::reachable(vcpu, list, 1); }
}  // namespace

long mmu_update(Vcpu& vcpu, TrapFrame&, Arguments& args) {
  perf::add(perf::Counter::mmu_hypercalls);
  // MMU operations see validated tables.
  return writable_page_tables::run_mmu_operation(*vcpu.domain, [&]() -> long {
    if (is_one_own_request(args)) [[likely]]
      return run_one_own_request(vcpu, args.a[0]);
    if (!list_starts_in_guest(vcpu, args.a[0])) return -XEN_EFAULT;
    Target target;
    if (long rc = mmu_target(vcpu, args.a[3], uint32_t(args.a[1]), target))
      return target.refused_before_done ? rc : finish(vcpu, args.a[2], 0, rc);
    // The tables updated and the frames mapped are seen validated too, whoever owns them: another
    // domain's detaches wait until the batch is done (it may run on another CPU meanwhile).
    Domain* frames = mm::is_guest_domain(target.page_owner) ? domains::find(target.page_owner) : nullptr;
    if (target.tables == vcpu.domain && (frames == nullptr || frames == vcpu.domain)) [[likely]]
      return run_updates(vcpu, args, target);
    return foreign_update(vcpu, args, target, frames);
  });
}

long mmuext_op(Vcpu& vcpu, TrapFrame&, Arguments& args) {
  perf::add(perf::Counter::mmu_hypercalls);
  // MMU operations see validated tables.
  return writable_page_tables::run_mmu_operation(*vcpu.domain, [&]() -> long {
    Domain* target = nullptr;
    if (!list_starts_in_guest(vcpu, args.a[0])) return -XEN_EFAULT;
    // A foreigndom refused before any operation leaves `done` unwritten, as Xen's do_mmuext_op.
    if (long rc = mmuext_target(vcpu, args.a[3], target)) return rc;
    if (target == vcpu.domain)
      return run_batch<mmuext_op_t>(
          vcpu, args,
          [&vcpu](mm::MmuContext& context, const mmuext_op_t& op) -> long {
            if (op.cmd == MMUEXT_SET_LDT) return ldt_rules::set_ldt(vcpu.ldt, op.arg1.linear_addr, op.arg2.nr_ents);
            if (op.cmd == MMUEXT_TLB_FLUSH_MULTI || op.cmd == MMUEXT_INVLPG_MULTI) [[unlikely]]
              return flush_multi(vcpu, context, op);
            return mm::mmuext_op(context, vcpu.bases, op);
          },
          *vcpu.domain);
    writable_page_tables::ForeignUse use(target);
    return run_batch<mmuext_op_t>(
        vcpu, args,
        [target](mm::MmuContext& context, const mmuext_op_t& op) { return foreign_mmuext(context, *target, op); },
        *target);
  });
}

namespace {
long map_va(Vcpu& vcpu, uint64_t va, uint64_t value, uint64_t flags, domid_t page_owner) {
  perf::add(perf::Counter::mmu_hypercalls);
  // MMU operations see validated tables.
  return writable_page_tables::run_mmu_operation(*vcpu.domain, [&]() -> long {
    mm::MmuContext& context = domain_mmu::reused_context(*vcpu.domain);
    context.page_owner = page_owner;
    uint64_t table = vcpu.active_table_mfn();
    // apply_va_flags invalidates va right below, before anything can use the old translation,
    // on every CPU that may hold it when invalidates_everywhere says so.
    const bool va_invalidated = invalidates_everywhere(vcpu, flags);
    const int rc = mm::update_va_mapping(context, table, va, value, va_invalidated);
    apply(context.effects);
    // As Xen's: the flush the flags ask for is made whether or not the update was (a flush type
    // of 3 asks for none, and is no error).
    return apply_va_flags(vcpu, va, flags, rc);
  });
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
