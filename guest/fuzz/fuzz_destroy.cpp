// The destroy class (fuzz/generator/fuzz_generate_hv.cpp), dom0's: a small domain created, given memory,
// maybe held by a foreign mapping of one of its frames, destroyed, and its id created again.
// The destroy is preemptible (continuations: the hypercall is re-executed after a pending
// interrupt), so the steps marked racing run from the timer's event, armed to fire during the
// destroy: dom0 borrows its timer port for a handler that runs the next racing step and arms
// the timer again, with events enabled around the destroydomain. Steps the destroy left no
// room for run right after it (the domain dying or dead then). The oracle is the recreated
// domain: it must own nothing (no page, no open port) of the one destroyed before it; the
// frame audit sees the rest. Everything the operation made is undone at its end.
#define __XEN_TOOLS__ 1
#include <stdint.h>
#include <xen/xen.h>
#include <xen/domctl.h>
#include <xen/event_channel.h>
#include <xen/memory.h>

#include "arch/xen.h"
#include "kernel/console/console.h"
#include "arch/control.h"
#include "kernel/memory/direct_map.h"
#include "kernel/events/events.h"
#include "fuzz/fuzz_internal.h"
#include "fuzz/fuzz_mailbox.h"
#include "kernel/events/time.h"
#include "fuzz/generator/fuzz_entries.h"
#include "pv-kernel-patches/pv_ops.h"

namespace kernel::fuzz {
namespace {

using namespace lib::fuzz;
using Kind = DomStep::Kind;

constexpr unsigned kFramesKept = 8, kPortsKept = 8;

// What one operation made, to use and to undo.
struct DestroyRun {
  Campaign* campaign = nullptr;
  const Op* op = nullptr;
  uint64_t frames[kDestroyDomainCount][kFramesKept] = {};  // frames populated for it
  unsigned frame_count[kDestroyDomainCount] = {};
  uint32_t its_ports[kDestroyDomainCount][kPortsKept] = {};  // ports allocated in it
  unsigned its_port_count[kDestroyDomainCount] = {};
  uint32_t our_ports[2 * kMaxDomSteps] = {};  // dom0's ports for it (closed at the end)
  unsigned our_port_count = 0;
  bool held = false, mapped = false;
  uint8_t pinned_domain = 0xff;
  uint64_t pinned_mfn = 0;
  unsigned next_racing = 0;  // the next racing step the timer's handler runs
  bool in_destroy = false;   // the handler runs racing steps only during a destroy
  // Destroyed (destroydomain answered 0) and not created again since: a call for it that takes
  // effect gives a dying or dead domain something new (Xen refuses them all: get_free_port and
  // assign_pages check is_dying; a dead domain's ports are closed).
  bool destroyed[kDestroyDomainCount] = {};
};

DestroyRun run;

domid_t id_of(uint8_t domain) { return kDestroyDomains[domain]; }

long create(uint8_t domain) {
  xen_domctl_t op = control::domctl_request(XEN_DOMCTL_createdomain, id_of(domain));
  op.u.createdomain = control::pv_domain_config();
  long rc = control::domctl(op);
  if (rc == 0) {
    ++run.campaign->stats.domains_created;
    run.destroyed[domain] = false;
  }
  return rc;
}

// Its frames come back in the work pages (no check uses them during an operation).
long populate(const DomStep& step) {
  auto* extents = reinterpret_cast<xen_pfn_t*>(run.campaign->work);
  uint32_t count = step.count > 512 ? 512 : step.count;
  for (uint32_t i = 0; i < count; ++i) extents[i] = (uint64_t(i) << step.order) + 0x100;
  xen_memory_reservation_t reservation{};
  set_xen_guest_handle(reservation.extent_start, extents);
  reservation.nr_extents = count;
  reservation.extent_order = step.order;
  reservation.domid = id_of(step.domain);
  long rc = xen::memory_op(XENMEM_populate_physmap, &reservation);
  unsigned& kept = run.frame_count[step.domain];
  for (long i = 0; i < rc && kept < kFramesKept; ++i) run.frames[step.domain][kept++] = extents[i];
  return rc;
}

uint64_t a_frame(uint8_t domain) {
  unsigned count = run.frame_count[domain];
  return count ? run.frames[domain][(run.next_racing + count - 1) % count] : 0x100;
}

long decrease(uint8_t domain) {
  xen_pfn_t frame = a_frame(domain);
  xen_memory_reservation_t reservation{};
  set_xen_guest_handle(reservation.extent_start, &frame);
  reservation.nr_extents = 1;
  reservation.domid = id_of(domain);
  return xen::memory_op(XENMEM_decrease_reservation, &reservation);
}

pv::PageTableSlot window_slot(uint64_t va) {
  return table_slot(kernel_l1_for(va), lib::table_index(va, Level::l1), Level::l1);
}

long map_its_frame(uint64_t va, uint8_t domain, bool& flag) {
  if (flag) return 0;
  long rc = pv::ops.map_foreign(window_slot(va), PageTableEntry::make(Mfn{a_frame(domain)}, PageTableEntry::kPresent),
                                id_of(domain));
  pv::ops.invalidate_page(va);
  if (rc == 0) flag = true;
  return rc;
}

void unmap_window(uint64_t va, bool& flag) {
  if (!flag) return;
  pv::ops.raw_mmu_update(window_slot(va).machine_address, 0);
  pv::ops.invalidate_page(va);
  flag = false;
}

void keep_our_port(uint32_t port) {
  if (run.our_port_count < sizeof(run.our_ports) / sizeof(run.our_ports[0])) run.our_ports[run.our_port_count++] = port;
}

long alloc_unbound(const DomStep& step) {
  evtchn_alloc_unbound_t request{};
  request.dom = step.remote ? DOMID_SELF : id_of(step.domain);
  request.remote_dom = step.remote ? id_of(step.domain) : DOMID_SELF;
  long rc = xen::event_channel_op(EVTCHNOP_alloc_unbound, &request);
  if (rc != 0) return rc;
  if (step.remote) {
    keep_our_port(request.port);
  } else if (run.its_port_count[step.domain] < kPortsKept) {
    run.its_ports[step.domain][run.its_port_count[step.domain]++] = request.port;
  }
  return rc;
}

long bind(uint8_t domain) {
  evtchn_bind_interdomain_t request{};
  request.remote_dom = id_of(domain);
  unsigned count = run.its_port_count[domain];
  request.remote_port = count ? run.its_ports[domain][count - 1] : 1;
  long rc = xen::event_channel_op(EVTCHNOP_bind_interdomain, &request);
  if (rc == 0) keep_our_port(request.local_port);
  return rc;
}

long pin(uint8_t domain) {
  if (run.pinned_domain != 0xff) return 0;
  mmuext_op_t op{};
  op.cmd = MMUEXT_PIN_L1_TABLE;
  op.arg1.mfn = a_frame(domain);
  long rc = arch::hypercall(__HYPERVISOR_mmuext_op, reinterpret_cast<uint64_t>(&op), 1, 0, id_of(domain));
  if (rc == 0) {
    run.pinned_domain = domain;
    run.pinned_mfn = op.arg1.mfn;
  }
  return rc;
}

// The recreated domain owns nothing: no frame, no open port (port 0 is reserved).
void check_fresh(Campaign& c, uint8_t domain) {
  xen_domctl_getdomaininfo info{};
  domid_t reported = 0;
  long rc = control::get_info(id_of(domain), info, &reported);
  bool pages = rc == 0 && reported == id_of(domain) && info.tot_pages != 0;
  uint32_t open_port = 0;
  for (uint32_t port = 1; port < 16 && !open_port; ++port) {
    evtchn_status_t status{};
    status.dom = id_of(domain);
    status.port = port;
    if (xen::event_channel_op(EVTCHNOP_status, &status) == 0 && status.status != EVTCHNSTAT_closed) open_port = port;
  }
  if (!pages && !open_port) return;
  if (c.stats.oracle_violations++ < 20)
    print("fuzz: op %lu found domain %u created again owning what the destroyed one had: %lu pages, port %u open\n",
          fuzz_mailbox.op, id_of(domain), pages ? uint64_t(info.tot_pages) : 0, open_port);
}

long run_step(Campaign& c, const DomStep& step);
long run_one(Campaign& c, const DomStep& step);

// The timer's event during a destroy: the next racing step, and the timer again for the next.
void on_racing_timer(uint32_t) {
  if (!run.in_destroy) return;
  const Op& op = *run.op;
  while (run.next_racing < op.dom_count && !op.dom[run.next_racing].racing) ++run.next_racing;
  if (run.next_racing >= op.dom_count) return;
  const DomStep& step = op.dom[run.next_racing++];
  if (step.kind != Kind::destroy) {
    run_step(*run.campaign, step);
    ++run.campaign->stats.racing_calls;
  }
  xen::set_timer(system_time_ns() + 20'000);
}

// The racing steps the timer's handler runs are those before this destroy not run yet.
long destroy(Campaign& c, const DomStep& step) {
  EventHandler timer = events_handler(c.timer_port);
  long rc;
  if (c.timer_port && timer) {
    xen::set_timer(system_time_ns() + step.delay_ns);
    events_attach(c.timer_port, on_racing_timer);
    run.in_destroy = true;
    pv::ops.enable_events();
    rc = control::simple_domctl(XEN_DOMCTL_destroydomain, id_of(step.domain));
    pv::ops.disable_events();
    run.in_destroy = false;
    events_attach(c.timer_port, timer);
    xen::set_timer(0);
  } else {
    rc = control::simple_domctl(XEN_DOMCTL_destroydomain, id_of(step.domain));
  }
  if (rc == 0) {
    ++c.stats.destroys;
    run.destroyed[step.domain] = true;
  }
  return rc;
}

// A call for a destroyed domain that took effect.
void judge_dead_call(Campaign& c, const DomStep& step, long rc) {
  if (!run.destroyed[step.domain] || run.in_destroy) return;
  bool took = false;
  switch (step.kind) {
    case Kind::populate: took = rc > 0; break;
    case Kind::alloc_unbound: took = rc == 0 && !step.remote; break;  // a port in it (dom0's may name anyone)
    case Kind::bind: took = rc == 0; break;
    default: return;
  }
  ++c.stats.dead_calls;
  if (!took) return;
  if (c.stats.oracle_violations++ < 20)
    print("fuzz: op %lu gave domain %u something after its destroy: %s answered %ld\n", fuzz_mailbox.op,
          id_of(step.domain), dom_step_name(step.kind), rc);
}

long run_step(Campaign& c, const DomStep& step) {
  long rc = run_one(c, step);
  judge_dead_call(c, step, rc);
  return rc;
}

long run_one(Campaign& c, const DomStep& step) {
  switch (step.kind) {
    case Kind::create: return create(step.domain);
    case Kind::max_mem: return control::max_mem(id_of(step.domain), step.count);
    case Kind::populate: return populate(step);
    case Kind::decrease: return decrease(step.domain);
    case Kind::hold: return map_its_frame(kHoldVa, step.domain, run.held);
    case Kind::release: unmap_window(kHoldVa, run.held); return 0;
    case Kind::destroy: return destroy(c, step);
    case Kind::alloc_unbound: return alloc_unbound(step);
    case Kind::bind: return bind(step.domain);
    case Kind::foreign_map: return map_its_frame(kForeignVa, step.domain, run.mapped);
    case Kind::pin: return pin(step.domain);
    case Kind::recreate: {
      if (run.held) return 0;  // it cannot be gone yet
      long rc = create(step.domain);
      if (rc == 0) {
        ++c.stats.recreations;
        check_fresh(c, step.domain);
      }
      return rc;
    }
    case Kind::count: break;
  }
  return 0;
}

void undo(Campaign&) {
  unmap_window(kHoldVa, run.held);
  unmap_window(kForeignVa, run.mapped);
  if (run.pinned_domain != 0xff) {
    mmuext_op_t op{};
    op.cmd = MMUEXT_UNPIN_TABLE;
    op.arg1.mfn = run.pinned_mfn;
    arch::hypercall(__HYPERVISOR_mmuext_op, reinterpret_cast<uint64_t>(&op), 1, 0, id_of(run.pinned_domain));
  }
  for (unsigned i = 0; i < run.our_port_count; ++i) {
    evtchn_close_t close{run.our_ports[i]};
    xen::event_channel_op(EVTCHNOP_close, &close);
  }
  // Both ids, created here or left by an earlier operation (a domain that was still dying).
  for (uint8_t d = 0; d < kDestroyDomainCount; ++d) control::simple_domctl(XEN_DOMCTL_destroydomain, id_of(d));
}

}  // namespace

void execute_destroy(Campaign& c, const Op& op) {
  run = DestroyRun{};
  run.campaign = &c;
  run.op = &op;
  // Racing steps run from the timer during the destroy that follows them; the ones a destroy
  // had no continuation for run right after it.
  bool racing_pending = false;
  for (unsigned i = 0; i < op.dom_count && i < kMaxDomSteps; ++i) {
    const DomStep& step = op.dom[i];
    if (step.racing) {
      racing_pending = true;
      continue;
    }
    if (step.kind == Kind::destroy && racing_pending) {
      run_step(c, step);
      for (unsigned k = run.next_racing; k < i; ++k)
        if (op.dom[k].racing) run_step(c, op.dom[k]);
      run.next_racing = i + 1;
      racing_pending = false;
      continue;
    }
    run_step(c, step);
  }
  undo(c);
}

}  // namespace kernel::fuzz
