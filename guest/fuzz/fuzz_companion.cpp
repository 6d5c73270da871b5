// fuzz_companion (dom0, beside a fuzzing domU): a domU cannot run the hypervisor's audit, so
// dom0 does it for it. dom0 finds domain 1's memory (the frames it may map with foreigndom 1),
// maps the domU's mailbox page (fuzz/fuzz_mailbox.h), audits whenever the domU asks, checks
// that pages of its own keep their contents, and returns when the domU's campaign is done or
// has shut down or crashed (getdomaininfo), or has made no progress for a while.
#define __XEN_TOOLS__ 1  // domctl.h is the tools' interface: getdomaininfo tells when domain 1 stopped
#include <stdint.h>
#include <xen/xen.h>
#include <xen/domctl.h>
#include "arch/hypercall.h"
#include "arch/xen.h"
#include "kernel/console/console.h"
#include "arch/control.h"
#include "kernel/memory/direct_map.h"
#include "fuzz/fuzz.h"
#include "fuzz/fuzz_mailbox.h"
#include "kernel/memory/page_allocator.h"
#include "kernel/memory/physical_memory.h"
#include "kernel/measurement/pvhv.h"
#include "kernel/events/time.h"
#include "kernel/events/timer.h"
#include "lib/cmdline.h"
#include "pv-kernel-patches/pv_ops.h"

namespace kernel {
namespace {

constexpr uint16_t kFuzzedDomain = 1;
constexpr uint64_t kWindowVa = kVirtBase + (1ull << 30) - (12ull << 20);
constexpr uint64_t kReadOnly = PageTableEntry::kPresent | PageTableEntry::kAccessed;
constexpr uint64_t kWritable = kReadOnly | PageTableEntry::kWritable | PageTableEntry::kDirty;
constexpr uint64_t kSecond = 1'000'000'000ull;
constexpr uint64_t kFindTimeoutNs = 120 * kSecond;
constexpr uint64_t kStallTimeoutNs = 60 * kSecond;
constexpr unsigned kCanaryPages = 4;

pv::PageTableSlot window_slot() {
  Mfn l1 = kernel_l1_for(kWindowVa);
  return table_slot(l1, lib::table_index(kWindowVa, Level::l1), Level::l1);
}

bool map_foreign(const pv::PageTableSlot& slot, uint64_t mfn, uint64_t flags) {
  long rc = pv::ops.map_foreign(slot, PageTableEntry::make(Mfn{mfn}, flags), kFuzzedDomain);
  if (rc == 0) pv::ops.invalidate_page(kWindowVa);
  return rc == 0;
}

void unmap(const pv::PageTableSlot& slot) {
  pv::ops.raw_mmu_update(slot.machine_address, 0);
  pv::ops.invalidate_page(kWindowVa);
}

// Whether domain 1 has shut down or crashed (then it makes no more progress: no need to wait
// for the stall timeout). -ENOSYS or an error: not known, keep waiting.
bool domu_stopped(unsigned& reason) {
  xen_domctl_getdomaininfo info{};
  domid_t reported = DOMID_INVALID;
  if (control::get_info(kFuzzedDomain, info, &reported) != 0 || reported != kFuzzedDomain) return false;
  reason = (info.flags >> XEN_DOMINF_shutdownshift) & XEN_DOMINF_shutdownmask;
  return info.flags & (XEN_DOMINF_shutdown | XEN_DOMINF_dying);
}

bool owned_by_domu(const pv::PageTableSlot& slot, uint64_t mfn) {
  if (!map_foreign(slot, mfn, kReadOnly)) return false;
  unmap(slot);
  return true;
}

// The domU's first frame: probe every 256th frame above dom0's memory (the boot domains are
// built in order) for one it owns, then search down. Not below: the hypervisor lets dom0 map
// I/O frames whatever page owner it names (Xen checks the named owner's I/O permission).
uint64_t find_first_frame(const pv::PageTableSlot& slot, uint64_t max_ram_page) {
  uint64_t own_end = boot_info.p2m[boot_info.nr_pages - 1] + 1;
  uint64_t below = own_end;
  for (uint64_t mfn = own_end; mfn < max_ram_page; mfn += 256) {
    if (!owned_by_domu(slot, mfn)) {
      below = mfn;
      continue;
    }
    uint64_t low = below, high = mfn;  // low not owned (or 0), high owned
    while (high - low > 1) {
      uint64_t middle = low + (high - low) / 2;
      (owned_by_domu(slot, middle) ? high : low) = middle;
    }
    return owned_by_domu(slot, low) ? low : high;
  }
  return ~0ull;
}

struct Canary {
  Pfn pages[kCanaryPages];
  void allocate() {
    for (Pfn& page : pages) page = allocate_zeroed_frame();
    fill();
  }
  void fill() {
    for (unsigned p = 0; p < kCanaryPages; ++p) {
      auto* words = pfn_pointer<uint64_t>(pages[p]);
      for (unsigned i = 0; i < 512; ++i) words[i] = pattern(p, i);
    }
  }
  unsigned damaged() const {
    unsigned bad = 0;
    for (unsigned p = 0; p < kCanaryPages; ++p) {
      auto* words = pfn_pointer<volatile uint64_t>(pages[p]);
      for (unsigned i = 0; i < 512; ++i) bad += words[i] != pattern(p, i);
    }
    return bad;
  }
  static uint64_t pattern(unsigned page, unsigned word) {
    return 0xc0ffee0000000000ull ^ (uint64_t(page) << 32) ^ (word * 0x9e3779b9ull);
  }
};

}  // namespace

void fuzz_companion_run_if_requested() {
  char value[8];
  if (!lib::cmdline_value(boot_info.cmdline, "fuzz_companion", value, sizeof(value))) return;
  print("fuzz-companion: looking for domain %u's fuzzer\n", kFuzzedDomain);
  Canary canary;
  canary.allocate();
  pv::PageTableSlot slot = window_slot();
  uint64_t max_ram_page = uint64_t(xen::memory_op(XENMEM_maximum_ram_page, nullptr));
  uint64_t mailbox_pfn = (reinterpret_cast<uint64_t>(&fuzz_mailbox) - kVirtBase) >> 12;
  uint64_t start = system_time_ns();
  volatile FuzzMailbox* mailbox = nullptr;
  uint64_t first = ~0ull;
  while (!mailbox && system_time_ns() - start < kFindTimeoutNs) {
    if (first == ~0ull) first = find_first_frame(slot, max_ram_page);
    if (first != ~0ull && map_foreign(slot, first + mailbox_pfn, kWritable)) {
      auto* candidate = reinterpret_cast<volatile FuzzMailbox*>(kWindowVa);
      if (candidate->magic == FuzzMailbox::kMagic) {
        mailbox = candidate;
        break;
      }
      unmap(slot);
    }
    sleep_until(system_time_ns() + 10'000'000);
  }
  if (!mailbox) {
    print("fuzz-companion: no fuzzer found in domain %u (first frame %lx)\n", kFuzzedDomain, first);
    return;
  }
  print("fuzz-companion: domain %u's mailbox at mfn %lx (seed 0x%lx)\n", kFuzzedDomain, first + mailbox_pfn,
        mailbox->seed);
  uint64_t audits = 0, mismatches = 0, canary_damage = 0, last_op = mailbox->op;
  uint64_t last_progress = system_time_ns(), last_report = last_progress;
  const char* end = nullptr;  // why the domU's campaign did not finish, if it did not
  for (;;) {
    uint64_t request = mailbox->audit_request;
    if (request != mailbox->audit_done) {
      long result = sys_pvhv_audit();
      ++audits;
      if (result > 0) mismatches += uint64_t(result);
      print("fuzz-companion: audit for domain %u after its op %lu: %ld frames disagree\n", kFuzzedDomain,
            mailbox->audit_request_op, result);
      mailbox->audit_result = result;
      __atomic_store_n(&mailbox->audit_done, request, __ATOMIC_SEQ_CST);
    }
    if (unsigned damaged = canary.damaged()) {
      canary_damage += damaged;
      print("fuzz-companion: %u words of dom0's own pages changed\n", damaged);
      canary.fill();
    }
    if (mailbox->state == FuzzMailbox::kDone) break;
    if (unsigned reason = 0; domu_stopped(reason)) {
      print("fuzz-companion: domain %u shut down (reason %u) before its campaign ended\n", kFuzzedDomain, reason);
      end = "shut down";
      break;
    }
    uint64_t now = system_time_ns();
    if (mailbox->op != last_op) {
      last_op = mailbox->op;
      last_progress = now;
    } else if (now - last_progress > kStallTimeoutNs) {
      end = "stopped making progress";
      break;
    }
    if (now - last_report > 30 * kSecond) {
      print("fuzz-companion: domain %u at op %lu\n", kFuzzedDomain, last_op);
      last_report = now;
    }
    sleep_until(now + 2'000'000);
  }
  uint64_t final_op = mailbox->op;
  unmap(slot);
  print("fuzz-companion: domain %u %s at op %lu: %lu audits, %lu mismatches, %lu canary words changed\n", kFuzzedDomain,
        end ? end : "finished", final_op, audits, mismatches, canary_damage);
  print("fuzz-companion: result: %s\n", !end && mismatches == 0 && canary_damage == 0 ? "passed" : "failed");
}

}  // namespace kernel
