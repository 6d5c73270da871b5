// What xenalyze --summary reports, rebuilt from the ordered records: log volume per class and
// CPU, per-domain and per-vCPU runstates (with xenalyze's start-of-day, lost-record and
// end-of-file rules), PV event and hypercall counts, and the total traced time.
#pragma once
#include <array>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "trace/analyze/cycle_summary.h"
#include "trace/analyze/record_order.h"
#include "trace/parse/event_catalog.h"

namespace trace {

enum Runstate { kRunning, kRunnable, kBlocked, kOffline, kLost, kQueued, kInit, kRunstateCount };
enum RunnableState { kRunnableInvalid, kRunnableWake, kRunnablePreempt, kRunnableOther, kRunnableCount };
enum DomainRunstate {
  kDomBlocked,
  kDomPartialRun,
  kDomFullRun,
  kDomPartialContention,
  kDomConcurrencyHazard,
  kDomFullContention,
  kDomLost,
  kDomainRunstateCount
};

const char* runstate_name(int state);
const char* runnable_state_name(int state);
const char* domain_runstate_name(int state);

constexpr int kIdleDomain = 32767;
constexpr int kDefaultDomain = 32768;
constexpr int kPvEventKinds = 15;    // xenalyze's PV_MAX
constexpr int kPvHypercallMax = 56;  // xenalyze's PV_HYPERCALL_MAX

struct DomainModel;

struct VcpuModel {
  DomainModel* domain = nullptr;
  int vid = 0;
  int state = kInit;
  int runnable_state = kRunnableInvalid;
  uint64_t state_tsc = 0;
  bool activated = false;
  bool delayed_init = false;
  int pcpu = -1;
  uint64_t pcpu_tsc = 0;
  std::array<CycleSummary, kRunstateCount> runstates;
  std::array<CycleSummary, kRunnableCount> runnable_states;
  CycleSummary affinity_all;
  std::map<int, CycleSummary> affinity_per_pcpu;
  bool has_pv = false;
  std::array<uint64_t, kPvEventKinds> pv_counts{};
  std::array<uint64_t, kPvHypercallMax> hypercalls{};
};

struct DomainModel {
  int did = 0;
  std::map<int, std::unique_ptr<VcpuModel>> vcpus;
  int runstate = kDomBlocked;
  uint64_t runstate_tsc = 0;
  std::array<CycleSummary, kDomainRunstateCount> runstates;
};

struct PcpuModel {
  int id = 0;
  VcpuModel* current = nullptr;
  uint64_t first_tsc = 0;
  uint64_t last_tsc = 0;
  bool lost_active = false;
  bool lost_domain_valid = false;
  bool seen_valid_schedule = false;
  int lost_did = 0, lost_vid = 0;
  uint64_t lost_tsc = 0;
  uint64_t time_tsc = 0;
  CycleSummary time_running, time_idle, time_lost;
  std::array<uint64_t, kToplevelCount> volume{};
  bool has_summary = false;
};

class XenModel {
 public:
  void run(const TraceFile& file, const std::vector<Step>& steps);

  uint64_t first_tsc() const { return first_tsc_; }
  uint64_t last_tsc() const { return last_tsc_; }
  uint64_t total_cycles() const { return elapsed(first_tsc_, last_tsc_); }
  const std::map<int, PcpuModel>& pcpus() const { return pcpus_; }
  const std::map<int, std::unique_ptr<DomainModel>>& domains() const { return domains_; }
  // xenalyze-style warnings ("Creating domain 0"...), for --verbose.
  const std::vector<std::string>& notes() const { return notes_; }

 private:
  void process(const ParsedRecord& r, const Step& step, PcpuModel& p);
  void track_time(const ParsedRecord& r, const Step& step);
  void lost_begin(const ParsedRecord& r, PcpuModel& p);
  void lost_end(const ParsedRecord& r, PcpuModel& p);
  void runstate_record(const ParsedRecord& r, PcpuModel& p);
  void pv_record(const ParsedRecord& r, PcpuModel& p);
  void vcpu_start(PcpuModel& p, VcpuModel& v, int old_state, int new_state, uint64_t tsc);
  void prev_update(PcpuModel& p, VcpuModel& prev, uint64_t tsc, int new_state);
  void next_update(PcpuModel& p, VcpuModel& next, uint64_t tsc);
  void runstate_update(VcpuModel& v, int new_state, uint64_t tsc);
  void pcpu_time_update(PcpuModel& p, uint64_t tsc);
  void deactivate(PcpuModel& p);
  void finish();
  int domain_runstate(const DomainModel& d) const;
  VcpuModel& find_vcpu(int did, int vid);
  VcpuModel& default_vcpu(int pcpu);

  std::map<int, PcpuModel> pcpus_;
  std::map<int, std::unique_ptr<DomainModel>> domains_;
  DomainModel default_domain_{kDefaultDomain, {}, kDomBlocked, 0, {}};
  uint64_t first_tsc_ = 0, last_tsc_ = 0;
  int lost_cpus_ = 0;
  std::vector<std::string> notes_;
};

}  // namespace trace
