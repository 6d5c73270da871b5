// The rules of the hv_frames and destroy classes (fuzz/generator/fuzz_generate_hv.cpp), checked on a
// generated operation as check_rules does for the others: the kernel keeps what it cannot run
// without (the hypercall page's mapping; shared_info's while events may be delivered), no type
// is taken on a frame mapped read-only only, entries go only into scratch slots and name a frame
// of ours writable only if it is a scratch frame, what an operation changes is restored after it,
// and the destroy class touches only the domains it creates.
#include <stddef.h>
#include <stdint.h>

#include "fuzz/generator/fuzz_entries.h"
#include "fuzz/generator/fuzz_model.h"

namespace lib::fuzz {
namespace {

constexpr uint64_t kPage = 4096;

bool names_frame(uint64_t value, uint64_t mfn) { return ((value & kAddressBits) >> 12) == mfn; }

const char* check_hv_entry(const Pool& pool, const HvStep& step, bool clear) {
  if (step.table >= pool.table_count) return "an hv_frames entry in no scratch table";
  if (step.slot >= 512 || !is_scratch_table_slot(pool, pool.table_mfn[step.table] * kPage + step.slot * 8ull))
    return "an hv_frames entry in a slot that is not the fuzzer's";
  if (clear) return step.value == 0 ? "" : "an hv_frames unmap that writes something";
  if (!names_frame(step.value, pool.hv_frames[step.frame].mfn)) return "an hv_frames entry naming another frame";
  if (!entry_safe(pool, step.value)) return "an hv_frames entry mapping a frame of ours writable";
  if (step.kind == HvStep::Kind::link && (step.level < 2 || step.level > 4)) return "an hv_frames link at no level";
  return "";
}

}  // namespace

const char* check_hv_frames(const Pool& pool, const Op& op) {
  using Kind = HvStep::Kind;
  if (op.hv_count > kMaxHvSteps) return "too many hv_frames steps";
  uint32_t unmapped = 0;
  for (unsigned i = 0; i < op.hv_count; ++i) {
    const HvStep& step = op.hv[i];
    if (step.frame >= pool.hv_frame_count) return "an hv_frames step on no frame";
    const HvFrame& frame = pool.hv_frames[step.frame];
    bool shared_info_unmapped = false;
    for (unsigned f = 0; f < pool.hv_frame_count; ++f)
      shared_info_unmapped |= ((unmapped >> f) & 1) && pool.hv_frames[f].kind == HvFrameKind::shared_info;
    switch (step.kind) {
      case Kind::prepare:
        if (frame.kind != HvFrameKind::console_ring && !frame.scratch)
          return "an hv_frames prepare of a frame that holds live state";
        break;
      case Kind::unmap_own:
        if (frame.kernel_needs) return "the kernel's mapping of a frame it runs on removed";
        unmapped |= 1u << step.frame;
        break;
      case Kind::remap_own:
        if (frame.kernel_needs) return "the kernel's mapping of a frame it runs on rewritten";
        unmapped &= ~(1u << step.frame);
        break;
      case Kind::pin:
        if (step.level < 1 || step.level > 4) return "an hv_frames pin at no level";
        [[fallthrough]];
      case Kind::unpin:
        if (frame.read_only) return "a type on a frame mapped read-only only (its contents validated)";
        break;
      case Kind::set_gdt:
        if (frame.read_only) return "a GDT on a frame mapped read-only only";
        if (!(op.restore & kRestoreGdt)) return "set_gdt without kRestoreGdt";
        break;
      case Kind::map_fuzz:
      case Kind::link:
        if (step.kind == Kind::link && frame.read_only) return "a link to a frame mapped read-only only";
        if (const char* problem = check_hv_entry(pool, step, false); *problem) return problem;
        break;
      case Kind::unmap_fuzz:
        if (const char* problem = check_hv_entry(pool, step, true); *problem) return problem;
        break;
      case Kind::register_area:
        if (frame.kind != HvFrameKind::runstate && frame.kind != HvFrameKind::time_area)
          return "a vCPU area registered over a frame that is not a scratch area frame";
        if (!(op.restore & kRestoreVcpuAreas)) return "a vCPU area without kRestoreVcpuAreas";
        break;
      case Kind::notify:
        if (!pool.console_port) return "a console notification with no console";
        break;
      case Kind::block:
        if (!op.arm_timer) return "a block with no timer armed";
        if (shared_info_unmapped) return "events unmasked while shared_info is not mapped";
        break;
      case Kind::yield:
      case Kind::send: break;
      default: return "an hv_frames step of no kind";
    }
  }
  return "";
}

const char* check_destroy(const Pool&, const Op& op) {
  using Kind = DomStep::Kind;
  if (op.dom_count > kMaxDomSteps) return "too many destroy steps";
  for (unsigned i = 0; i < op.dom_count; ++i) {
    const DomStep& step = op.dom[i];
    if (step.domain >= kDestroyDomainCount) return "a destroy step on a domain the class did not create";
    if (step.kind >= Kind::count) return "a destroy step of no kind";
    if (step.order != 0 && step.order != 9) return "an extent order the pool cannot spare";
    if (step.kind == Kind::populate && (uint64_t(step.count) << step.order) > 8192)
      return "more memory for a destroyed domain than the machine spares";
    if (step.kind == Kind::max_mem && step.count > 32768) return "a max_mem beyond 32 MiB";
  }
  return "";
}

const char* hv_frame_name(HvFrameKind kind) {
  static const char* const kNames[] = {"console ring", "shared_info",    "runstate area",
                                       "time area",    "hypercall page", "vcpu_info"};
  return unsigned(kind) < sizeof(kNames) / sizeof(kNames[0]) ? kNames[unsigned(kind)] : "?";
}

const char* hv_step_name(HvStep::Kind kind) {
  static const char* const kNames[] = {"prepare", "unmap_own", "remap_own", "pin",        "unpin",
                                       "set_gdt", "map_fuzz",  "link",      "unmap_fuzz", "register_area",
                                       "notify",  "yield",     "block",     "send"};
  return unsigned(kind) < sizeof(kNames) / sizeof(kNames[0]) ? kNames[unsigned(kind)] : "?";
}

const char* dom_step_name(DomStep::Kind kind) {
  static const char* const kNames[] = {"create",  "max_mem",       "populate", "decrease",    "hold", "release",
                                       "destroy", "alloc_unbound", "bind",     "foreign_map", "pin",  "recreate"};
  return unsigned(kind) < sizeof(kNames) / sizeof(kNames[0]) ? kNames[unsigned(kind)] : "?";
}

}  // namespace lib::fuzz
