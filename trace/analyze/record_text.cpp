#include "trace/analyze/record_text.h"

#include "trace/analyze/checked.h"
#include "trace/format/events.h"
#include "trace/format/framing.h"
#include "trace/parse/event_catalog.h"

namespace trace {
namespace {

std::string format(const char* fmt, unsigned long long a, unsigned long long b = 0, unsigned long long c = 0,
                   unsigned long long d = 0) {
  char text[160];
  std::snprintf(text, sizeof text, fmt, a, b, c, d);
  return text;
}

std::string raw_words(const ParsedRecord& r) {
  std::string text = "[";
  for (unsigned i = 0; i < r.extra_count; ++i) text += format(" %llx", r.extra[i]);
  return text + " ]";
}

}  // namespace

std::string describe_record(const ParsedRecord& r) {
  using namespace events;
  std::string name = event_name(r.event);
  switch (r.event) {
    case kPvPageFault:
      if (r.extra_count == 5)
        return "page_fault eip " + format("%llx addr %llx ec %llx", r.extra64(0), r.extra64(2), r.extra[4]);
      break;
    case kPvPtwrEmulation:
      if (r.extra_count == 6)
        return "ptwr l1e " + format("%llx addr %llx eip %llx", r.extra64(0), r.extra64(2), r.extra64(4));
      break;
    case kPvHypercallV2:
    case kPvHypercallSubcall:
      if (r.extra_count >= 1) {
        uint32_t op = r.extra[0] & ~uint32_t(TRC_PV_HYPERCALL_V2_ARG_MASK);
        const char* call = hypercall_name(op);
        return std::string(r.event == kPvHypercallSubcall ? " hypercall" : "hypercall") + format(" %2llx", op) + " (" +
               (call ? call : "?") + ") " + raw_words(r);
      }
      break;
    case kLostRecords:
      if (r.extra_count == 4) {
        LostRecords l = LostRecords::from_extra(r.extra);
        return "lost_records count " + format("%llu d%lluv%llu first_tsc %llu", l.count, l.domain, l.vcpu, l.first_tsc);
      }
      break;
    case kPtwrUnhook: return "ptwr_unhook l1 mfn " + format("%llx l2 slot %llu", r.extra64(0), r.extra[2]);
    case kPtwrRehook:
      return "ptwr_rehook l1 mfn " + format("%llx changed %llu revalidated %llu refused %llu", r.extra64(0), r.extra[2],
                                            r.extra[3], r.extra[4]);
    case kPteWriteFault:
      if (r.extra_count == 6)
        return "pte_write_fault rip " +
               format("%llx addr %llx table mfn %llx", r.extra64(0), r.extra64(2), r.extra64(4));
      break;
    case kTlbFlush: return "tlb_flush scope " + format("%llu reason %llu", r.extra[0], r.extra[1]);
    case kInvlpg: return "invlpg va " + format("%llx", r.extra64(0));
    case kFlushIpiSend:
      if (r.extra_count == 2) return "flush_ipi_send cpus " + format("%#llx clock %llu", r.extra[0], r.extra[1]);
      break;
    case kFlushIpiReceive:
      if (r.extra_count == 2) return "flush_ipi_receive from cpu" + format("%llu tick %llu", r.extra[0], r.extra[1]);
      break;
    case kAuditResult: return "audit frames " + format("%llu mismatches %llu", r.extra[0], r.extra[1]);
    case kCaptureDrain:
      if (r.extra_count == 3 && r.tsc >= r.extra64(0))
        return "capture_drain " + format("%llu bytes in %llu cycles", r.extra[2], r.tsc - r.extra64(0));
      break;
    case kSchedSwitch:
      if (r.extra_count == 4)
        return "sched_switch " + format("d%luv%lu -> d%luv%lu", r.extra[0], r.extra[1], r.extra[2], r.extra[3]);
      break;
    case kSchedWake:
    case kSchedBlock:
    case kSchedYield:
      if (r.extra_count == 2) return name + format(" d%luv%lu", r.extra[0], r.extra[1]);
      break;
    case kSchedContinueRunning:  // one word, as Xen packs it: vcpu | domain << 16
      if (r.extra_count == 1) return name + format(" d%luv%lu", r.extra[0] >> 16, r.extra[0] & 0xffff);
      break;
    default: break;
  }
  if ((r.event & 0x0ffff00fu) == TRC_SCHED_RUNSTATE_CHANGE && r.extra_count >= 1)
    return "runstate_change " + format("d%luv%lu %llu->%llu", r.extra[0] >> 16, r.extra[0] & 0xffff,
                                       (r.event >> 8) & 0xf, (r.event >> 4) & 0xf);
  return name + format(" %#llx ", r.event) + raw_words(r);
}

void dump_all(std::FILE* out, const Analysis& a) {
  uint64_t first = a.model.first_tsc();
  for (const Step& step : a.steps) {
    const ParsedRecord& r = a.file.records[step.record];
    // In integers: cycles / hz seconds and the remainder's nanoseconds (< 10^9 * hz, which
    // fits 128 bits). A double would overflow uint64 for a TSC far from the first one.
    uint64_t tsc = elapsed(first, r.tsc);
    uint64_t seconds = tsc / a.hz.hz;
    uint64_t ns = uint64_t((unsigned __int128)(tsc % a.hz.hz) * 1000000000u / a.hz.hz);
    std::fprintf(out, "%3llu.%09llu cpu%u %s%s\n", (unsigned long long)seconds, (unsigned long long)ns, r.cpu,
                 step.lost_end ? "lost_records end " : "", step.lost_end ? "" : describe_record(r).c_str());
  }
}

}  // namespace trace
