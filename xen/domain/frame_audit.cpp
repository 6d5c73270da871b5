#include "domain/frame_audit.h"
#include "console/console.h"
#include "domain/domain.h"
#include "domain/shared_info.h"
#include "memory/boot_memory.h"
#include "memory/machine.h"
#include "mm/audit.h"
#include "trace/format/events.h"
#include "tracing/trace_buffers.h"

namespace frame_audit {
namespace {
constexpr uint64_t page = 4096;

const char* type_name(mm::PageType type) {
  static const char* const names[] = {"none", "writable", "L1", "L2", "L3", "L4", "segdesc"};
  return names[unsigned(type)];
}

// The audit needs one ExpectedFrame per machine frame: taken from free memory for the
// duration of the audit and given back.
struct Scratch {
  uint64_t first = 0, count = 0;
  mm::ExpectedFrame* frames = nullptr;
};

bool take_scratch(uint64_t nr_frames, Scratch& scratch) {
  scratch.count = (nr_frames * sizeof(mm::ExpectedFrame) + page - 1) / page;
  if (boot_memory::allocator().allocate_contiguous(scratch.count, 1, scratch.first) != boot::FrameAllocatorError::none)
    return false;
  scratch.frames = machine::to_virtual<mm::ExpectedFrame>(scratch.first * page);
  for (uint64_t i = 0; i < nr_frames; ++i) scratch.frames[i] = mm::ExpectedFrame{};
  return true;
}
}  // namespace

Result run_and_report() {
  Result result;
  mm::FrameTable& table = boot_memory::frame_table();
  Scratch scratch;
  if (!take_scratch(table.size(), scratch)) {
    printk("audit: not run (no memory for its scratch table)\n");
    return result;
  }
  // Each vCPU's base pointers hold their L4s: references no page table accounts for.
  // So does the hypervisor's hold on each shared_info page (a writable type reference).
  // And each GDT frame its set_gdt holds (a general and a descriptor type reference).
  // And each guest frame the hypervisor writes through the direct map, a registered
  // vcpu_info's and a console ring (a general and a writable type reference).
  // And each frame the FIFO event channels write (a general and a writable type reference).
  constexpr unsigned per_vcpu = 3 + Vcpu::max_gdt_frames;  // two base pointers, a vcpu_info, its GDT
  constexpr unsigned per_domain = Domain::vcpu_capacity * per_vcpu + 2 + evtchn_fifo::kMaxFramesHeld;
  static mm::ExternalHold holds[per_domain * domains::max_domains];
  unsigned count = 0;
  domains::for_each([&](const Domain& domain) {
    for (const Vcpu& vcpu : domain.vcpus) {  // every vCPU, made or not: one not made holds nothing
      const uint64_t bases[] = {vcpu.bases.kernel_mfn, vcpu.bases.user_mfn};
      for (uint64_t base : bases)
        if (base) holds[count++] = mm::ExternalHold{base, 1, 1, mm::PageType::L4};
      if (vcpu.registered_info_frame.held) holds[count++] = mm::audit_hold(vcpu.registered_info_frame);
      for (unsigned i = 0; i < Vcpu::max_gdt_frames; ++i)
        if (vcpu.gdt_frames[i])
          holds[count++] = mm::ExternalHold{vcpu.gdt_frames[i], 1, 1, mm::PageType::SegmentDescriptor};
    }
    if (domain.console_ring.held) holds[count++] = mm::audit_hold(domain.console_ring);
    evtchn_fifo::for_each_frame(domain.fifo, [&](uint64_t mfn) {
      holds[count++] = mm::ExternalHold{mfn, 1, 1, mm::PageType::Writable};
    });
    if (domain.shared_info)
      holds[count++] = mm::ExternalHold{domain.shared_info_mfn, shared_info_page::hold_general_refs,
                                        shared_info_page::hold_type_refs, mm::PageType::Writable};
  });
  mm::AuditReport report = mm::audit_frame_table(table, holds, count, scratch.frames);
  boot_memory::allocator().free_contiguous(scratch.first, scratch.count);

  result.ran = true;
  result.mismatches = report.mismatches;
  trace::event(trace::events::kAuditResult, uint32_t(table.size()), uint32_t(report.mismatches));
  if (report.clean()) {
    printk("audit: clean (%lu frames checked)\n", table.size());
    return result;
  }
  printk("audit: %lu frames disagree with the page tables\n", report.mismatches);
  for (unsigned i = 0; i < report.recorded; ++i) {
    const mm::AuditMismatch& m = report.first[i];
    printk("  mfn %lx: general %u expected %u, type %s x%u expected %s x%u%s%s%s", m.mfn, m.actual_general,
           m.expected_general, type_name(m.actual_type), m.actual_type_refs, type_name(m.expected_type),
           m.expected_type_refs, m.untracked_block ? ", an entry outside its nonzero blocks" : "",
           m.entry_outside_table ? ", an entry linking a frame outside the frame table" : "",
           m.linear_counts ? ", linear entry counts disagree" : "");
    if (m.orphan) printk(", owned by d%u but on no list of a live domain", unsigned(m.owner));
    printk("\n");
  }
  return result;
}
}  // namespace frame_audit
