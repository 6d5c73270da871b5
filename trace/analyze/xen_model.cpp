#include "trace/analyze/xen_model.h"

#include "trace/format/events.h"
#include "trace/format/framing.h"

namespace trace {

const char* runstate_name(int state) {
  static const char* names[] = {"running", "runnable", "blocked", "offline", "lost", "queued", "init"};
  return state >= 0 && state < kRunstateCount ? names[state] : "?";
}

const char* runnable_state_name(int state) {
  static const char* names[] = {"invalid", "wake", "preempt", "other"};
  return state >= 0 && state < kRunnableCount ? names[state] : "?";
}

const char* domain_runstate_name(int state) {
  static const char* names[] = {
      "blocked", "partial run", "full run", "partial contention", "concurrency_hazard", "full_contention", "lost"};
  return state >= 0 && state < kDomainRunstateCount ? names[state] : "?";
}

namespace {
std::string vcpu_label(const VcpuModel& v) { return "d" + std::to_string(v.domain->did) + "v" + std::to_string(v.vid); }
}  // namespace

void XenModel::run(const TraceFile& file, const std::vector<Step>& steps) {
  std::map<int, size_t> last_step;
  for (size_t i = 0; i < steps.size(); ++i) {
    const ParsedRecord& r = file.records[steps[i].record];
    last_step[int(r.cpu)] = i;
    PcpuModel& p = pcpus_[int(r.cpu)];
    if (r.has_tsc && p.first_tsc == 0) p.first_tsc = r.tsc;
  }
  for (auto& [id, p] : pcpus_) {
    p.id = id;
    p.current = &default_vcpu(id);
  }
  for (size_t i = 0; i < steps.size(); ++i) {
    const ParsedRecord& r = file.records[steps[i].record];
    PcpuModel& p = pcpus_[int(r.cpu)];
    if (r.has_tsc) p.last_tsc = r.tsc;
    process(r, steps[i], p);
    if (last_step[int(r.cpu)] == i) deactivate(p);
  }
  finish();
}

void XenModel::process(const ParsedRecord& r, const Step& step, PcpuModel& p) {
  p.has_summary = true;
  track_time(r, step);
  int toplevel = toplevel_class(r.event);
  if (toplevel < 0) {
    notes_.push_back("record with unknown class skipped: event " + std::to_string(r.event));
    return;
  }
  switch (toplevel) {
    case 0:
      if (r.event == events::kLostRecords && r.extra_count == LostRecords::kExtraWords && r.has_tsc)
        step.lost_end ? lost_end(r, p) : lost_begin(r, p);
      break;
    case 1:
      if (event_subclass(r.event) == 1) runstate_record(r, p);
      break;
    case 5:
      if (p.current && p.current->domain->did != kIdleDomain)
        pv_record(r, p);
      else
        notes_.push_back("PV record without a current non-idle vcpu: not processed");
      break;
    default: break;
  }
  p.volume[size_t(toplevel)] += r.size;
}

// The traced interval runs from the first to the last order TSC of a timestamped record.
void XenModel::track_time(const ParsedRecord& r, const Step& step) {
  if (r.tsc == 0 || r.tsc < first_tsc_) return;
  uint64_t tsc = step.lost_end ? r.tsc : step.order_tsc;
  if (first_tsc_ == 0) first_tsc_ = tsc;
  last_tsc_ = tsc;
}

void XenModel::lost_begin(const ParsedRecord& r, PcpuModel& p) {
  LostRecords lost = LostRecords::from_extra(r.extra);
  if (p.current) prev_update(p, *p.current, lost.first_tsc, kLost);
  if (!p.lost_active) lost_cpus_++;
  p.lost_active = true;
  p.lost_tsc = lost.first_tsc;
  // A vcpu that is not running may have been scheduled during the gap: its state is unknown.
  for (auto& [did, d] : domains_)
    for (auto& [vid, v] : d->vcpus)
      if (v->state != kRunning) runstate_update(*v, kLost, lost.first_tsc);
  p.lost_domain_valid = true;
  p.lost_did = lost.domain;
  p.lost_vid = lost.vcpu;
}

void XenModel::lost_end(const ParsedRecord& r, PcpuModel& p) {
  if (!p.lost_active) {
    notes_.push_back("lost_records end on a cpu that is not lost");
    return;
  }
  if (r.tsc > p.lost_tsc) {
    p.time_lost.add_interval(p.lost_tsc, r.tsc);
    if (p.lost_domain_valid) {
      if (p.current) {
        notes_.push_back("lost record names a vcpu but the cpu already runs " + vcpu_label(*p.current));
        return;
      }
      next_update(p, find_vcpu(p.lost_did, p.lost_vid), r.tsc);
      p.lost_domain_valid = false;
      p.seen_valid_schedule = false;  // that schedule was inferred, not traced
    }
    p.lost_active = false;
    lost_cpus_--;
  }
}

void XenModel::runstate_record(const ParsedRecord& r, PcpuModel& p) {
  unsigned type = r.event & 0xf;
  int new_state = int((r.event >> 4) & 0xf), old_state = int((r.event >> 8) & 0xf);
  bool is_continue = type == 2;
  if (is_continue)
    new_state = old_state = kRunning;
  else if (type != 1)
    return;
  if (r.extra_count < 1 || new_state > kOffline || old_state > kOffline) return;
  int vid = int(r.extra[0] & 0xffff), did = int(r.extra[0] >> 16);
  if (vid > 256) return;
  VcpuModel& v = find_vcpu(did, vid);
  if (v.state == kInit) {
    vcpu_start(p, v, old_state, new_state, r.tsc);
    return;
  }
  if (v.state != old_state) {
    if (v.state == kLost && new_state != kRunning) return;
    if (v.state != kLost) {
      notes_.push_back("runstate_change old_runstate " + std::string(runstate_name(old_state)) + ", " + vcpu_label(v) +
                       " runstate " + runstate_name(v.state) + ". Possible tsc skew.");
      if (v.state == kRunning) return;
    }
  }
  if (is_continue) {
    if (v.state == kLost) {
      if (p.current) prev_update(p, *p.current, r.tsc, kLost);
      next_update(p, v, r.tsc);
    }
    runstate_update(v, kRunning, r.tsc);
  } else if (old_state == kRunning || v.state == kRunning) {
    if (old_state == kRunning)
      prev_update(p, v, r.tsc, new_state);
    else if (v.pcpu >= 0)
      prev_update(pcpus_[v.pcpu], v, r.tsc, new_state);
    else
      runstate_update(v, new_state, r.tsc);
    if (lost_cpus_ && v.domain->did != kIdleDomain) runstate_update(v, kLost, r.tsc);
  } else if (new_state == kRunning) {
    next_update(p, v, r.tsc);
  } else {
    runstate_update(v, new_state, r.tsc);
  }
}

void XenModel::pv_record(const ParsedRecord& r, PcpuModel& p) {
  VcpuModel& v = *p.current;
  v.has_pv = true;
  unsigned minor = r.event & 0xff;
  bool x64 = (r.event & TRC_64_FLAG) != 0;
  unsigned kind = minor == 12 ? 11 : minor;  // ptwr(pae) counts as ptwr
  if (kind < kPvEventKinds) v.pv_counts[kind]++;
  uint32_t op = kPvHypercallMax;
  if (minor == 1 && r.extra_count >= (x64 ? 3 : 2))
    op = r.extra[x64 ? 2 : 1];
  else if ((minor == 13 || minor == 14) && r.extra_count >= 1)
    op = r.extra[0] & ~uint32_t(TRC_PV_HYPERCALL_V2_ARG_MASK);
  if (op < kPvHypercallMax) v.hypercalls[op]++;
}

void XenModel::vcpu_start(PcpuModel& p, VcpuModel& v, int old_state, int new_state, uint64_t tsc) {
  if (old_state == kRunning) {
    if (!p.current || p.current->domain->did != kDefaultDomain) {
      notes_.push_back("Strange, p->current not default domain!");
      return;
    }
    runstate_update(*p.current, kQueued, p.first_tsc);
    p.current = nullptr;
  }
  if (new_state != kRunning) {
    v.delayed_init = true;  // stays INIT until seen running somewhere
    return;
  }
  v.delayed_init = false;
  uint64_t start = old_state == kRunning ? p.first_tsc : tsc;
  runstate_update(v, kRunning, start);
  p.time_tsc = start;
  p.current = &v;
  v.pcpu = p.id;
}

void XenModel::prev_update(PcpuModel& p, VcpuModel& prev, uint64_t tsc, int new_state) {
  if (prev.pcpu != p.id || p.current != &prev || prev.state != kRunning) {
    notes_.push_back("Strange, sched_switch prev " + vcpu_label(prev) + " on pcpu " + std::to_string(p.id));
    prev.state_tsc = 0;
  }
  pcpu_time_update(p, tsc);
  p.current = nullptr;
  runstate_update(prev, new_state, tsc);
}

void XenModel::next_update(PcpuModel& p, VcpuModel& next, uint64_t tsc) {
  if (p.current) {
    if (p.seen_valid_schedule) notes_.push_back("p->current not NULL at next_update (" + vcpu_label(*p.current) + ")");
    runstate_update(*p.current, kLost, tsc);
    p.current = nullptr;
  }
  if (next.activated) {
    if (next.state == kRunning && next.domain->did != kDefaultDomain) next.state_tsc = 0;
    if (next.pcpu != p.id) {
      if (next.pcpu_tsc) {
        next.affinity_all.add_interval(next.pcpu_tsc, tsc);
        next.affinity_per_pcpu[p.id].add_interval(next.pcpu_tsc, tsc);
      }
      next.pcpu_tsc = tsc;
    }
  } else {
    next.activated = true;
    next.pcpu_tsc = tsc;
  }
  runstate_update(next, kRunning, tsc);
  next.pcpu = p.id;
  p.current = &next;
  p.time_tsc = tsc;
  p.seen_valid_schedule = true;
}

void XenModel::runstate_update(VcpuModel& v, int new_state, uint64_t tsc) {
  if (v.state_tsc > 0 && v.state_tsc < tsc) {
    v.runstates[size_t(v.state)].add(tsc - v.state_tsc);
    if (v.state == kRunnable) v.runnable_states[size_t(v.runnable_state)].add(tsc - v.state_tsc);
  }
  if (new_state == kRunnable)
    v.runnable_state = v.state == kRunning                            ? kRunnablePreempt
                       : (v.state == kBlocked || v.state == kOffline) ? kRunnableWake
                                                                      : kRunnableOther;
  else
    v.runnable_state = kRunnableInvalid;
  v.state = new_state;
  v.state_tsc = tsc;
  DomainModel& d = *v.domain;
  if (d.runstate_tsc > 0 && d.runstate_tsc < tsc) d.runstates[size_t(d.runstate)].add(tsc - d.runstate_tsc);
  d.runstate = domain_runstate(d);
  d.runstate_tsc = tsc;
}

int XenModel::domain_runstate(const DomainModel& d) const {
  if (d.did == kDefaultDomain) return 0;
  int counts[kRunstateCount] = {};
  int vcpus = 0;
  for (auto& [vid, v] : d.vcpus)
    if (v->state != kInit) {
      vcpus++;
      counts[v->state]++;
    }
  bool blocked = counts[kBlocked] || counts[kOffline];
  if (counts[kLost] == vcpus) return kDomLost;
  if (counts[kRunning]) return counts[kRunnable] ? kDomConcurrencyHazard : blocked ? kDomPartialRun : kDomFullRun;
  if (counts[kRunnable]) return blocked ? kDomPartialContention : kDomFullContention;
  return kDomBlocked;
}

void XenModel::pcpu_time_update(PcpuModel& p, uint64_t tsc) {
  if (!p.time_tsc || !p.current) return;
  (p.current->domain->did == kIdleDomain ? p.time_idle : p.time_running).add_interval(p.time_tsc, tsc);
  p.time_tsc = 0;
}

void XenModel::deactivate(PcpuModel& p) {
  if (!p.current) return;
  pcpu_time_update(p, p.last_tsc);
  notes_.push_back("deactivate_pcpu: setting " + vcpu_label(*p.current) + " to state LOST");
  runstate_update(*p.current, kLost, p.last_tsc);
}

void XenModel::finish() {
  for (auto& [did, d] : domains_)
    for (auto& [vid, v] : d->vcpus)
      if (v->pcpu_tsc && v->pcpu >= 0) {
        v->affinity_all.add_interval(v->pcpu_tsc, last_tsc_);
        v->affinity_per_pcpu[v->pcpu].add_interval(v->pcpu_tsc, last_tsc_);
      }
}

VcpuModel& XenModel::find_vcpu(int did, int vid) {
  auto& d = domains_[did];
  if (!d) {
    notes_.push_back("Creating domain " + std::to_string(did));
    d = std::make_unique<DomainModel>();
    d->did = did;
  }
  auto& v = d->vcpus[vid];
  if (!v) {
    notes_.push_back("Creating vcpu " + std::to_string(vid) + " for dom " + std::to_string(did));
    v = std::make_unique<VcpuModel>();
    v->domain = d.get();
    v->vid = vid;
  }
  return *v;
}

VcpuModel& XenModel::default_vcpu(int pcpu) {
  auto& v = default_domain_.vcpus[pcpu];
  if (!v) {
    v = std::make_unique<VcpuModel>();
    v->domain = &default_domain_;
    v->vid = pcpu;
    v->activated = true;
    v->pcpu = pcpu;
    v->state = kRunning;
  }
  return *v;
}

}  // namespace trace
