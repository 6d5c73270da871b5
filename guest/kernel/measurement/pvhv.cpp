// sysctl.h is the tools' interface: its guest-handle types exist only for __XEN_TOOLS__,
// which must be set before the first Xen header.
#define __XEN_TOOLS__ 1
#include <stddef.h>
#include <stdint.h>
#include <xen/xen.h>
#include <xen/sysctl.h>

#include "kernel/measurement/pvhv.h"
#include "kernel/measurement/trace_capture.h"

#include "arch/hypercall.h"
#include "kernel/console/console.h"
#include "kernel/memory/direct_map.h"
#include "lib/linux_abi.h"
#include "kernel/memory/page_allocator.h"
#include "kernel/console/panic.h"
#include "kernel/memory/physical_memory.h"
#include "lib/cmdline.h"
#include "user/pvhv.h"

namespace kernel {
namespace {

using namespace linux_abi;

constexpr unsigned kMaxCounters = 512;
constexpr unsigned kMaxValues = 4096;
xen_sysctl_perfc_desc_t descriptions[kMaxCounters];
xen_sysctl_perfc_val_t values[kMaxValues];

long perfc_query(xen_sysctl_perfc_desc_t* desc, xen_sysctl_perfc_val_t* val, uint32_t& counters,
                 uint32_t& value_count) {
  xen_sysctl_t request{};
  request.cmd = XEN_SYSCTL_perfc_op;
  request.interface_version = XEN_SYSCTL_INTERFACE_VERSION;
  request.u.perfc_op.cmd = XEN_SYSCTL_PERFCOP_query;
  set_xen_guest_handle(request.u.perfc_op.desc, desc);
  set_xen_guest_handle(request.u.perfc_op.val, val);
  long rc = arch::hypercall(__HYPERVISOR_sysctl, arch::arg(&request));
  counters = request.u.perfc_op.nr_counters;
  value_count = request.u.perfc_op.nr_vals;
  return rc;
}

uint64_t* field_for(pvhv_counters& out, const char* name) {
  struct Mapping {
    const char* name;
    uint64_t pvhv_counters::*field;
  };
  static const Mapping kMappings[] = {
      {"pv_page_faults", &pvhv_counters::page_faults},    {"ptwr_emulations", &pvhv_counters::emulations},
      {"ptwr_unhooks", &pvhv_counters::unhooks},          {"ptwr_rehooks", &pvhv_counters::rehooks},
      {"ptwr_revalidated", &pvhv_counters::revalidated},  {"tlb_flushes", &pvhv_counters::flushes},
      {"mmu_hypercalls", &pvhv_counters::mmu_hypercalls}, {"hypercalls", &pvhv_counters::hypercalls},
      {"cr3_writes", &pvhv_counters::cr3_writes},         {"tlb_invlpgs", &pvhv_counters::invlpgs},
      {"guest_syscalls", &pvhv_counters::guest_syscalls}, {"type_change_flushes", &pvhv_counters::type_change_flushes},
      {"ptwr_faults", &pvhv_counters::detaches},
  };
  for (const Mapping& mapping : kMappings) {
    if (lib::string_equal(name, mapping.name)) return &(out.*mapping.field);
  }
  return nullptr;
}

}  // namespace

long read_pvhv_counters(pvhv_counters& result) {
  uint32_t counters = 0, value_count = 0;
  // First learn the sizes, then fetch names and values.
  if (perfc_query(nullptr, nullptr, counters, value_count) < 0) return -kENOSYS;
  if (counters > kMaxCounters || value_count > kMaxValues) return -kENOSYS;
  if (perfc_query(descriptions, values, counters, value_count) < 0) return -kENOSYS;
  result = pvhv_counters{};
  uint32_t value_index = 0;
  for (uint32_t i = 0; i < counters && i < kMaxCounters; ++i) {
    char name[sizeof(descriptions[i].name) + 1];
    __builtin_memcpy(name, descriptions[i].name, sizeof(descriptions[i].name));
    name[sizeof(descriptions[i].name)] = '\0';
    uint64_t sum = 0;
    for (uint32_t v = 0; v < descriptions[i].nr_vals && value_index < value_count; ++v) {
      sum += values[value_index++];
    }
    if (uint64_t* field = field_for(result, name)) *field = sum;
  }
  return 0;
}

// Our hypervisor's private sysctl command (xen/hypercall/sysctl.cpp): run the audit now.
long sys_pvhv_audit() {
  constexpr uint32_t kSysctlPvhvAudit = 0x8000;
  pv::ops.flush();  // batched updates first: the audit must see what the kernel meant
  xen_sysctl_t request{};
  request.cmd = kSysctlPvhvAudit;
  request.interface_version = XEN_SYSCTL_INTERFACE_VERSION;
  long rc = arch::hypercall(__HYPERVISOR_sysctl, arch::arg(&request));
  return rc < 0 ? -kENOSYS : rc;
}

long sys_pvhv_pte_bench(uint64_t count) {
  // A scratch frame and an L1 table of its own (pinned, so the hypervisor types it and can
  // emulate direct writes to it; not linked into any address space).
  Pfn scratch = allocate_zeroed_frame();
  Mfn table = new_page_table_frame();
  if (pv::ops.pin(Level::l1, table) < 0) panic("pinning the scratch L1");
  auto slot = table_slot(table, 0, Level::l1);
  const auto read_only = PageTableEntry::make(
      pfn_to_mfn(scratch), PageTableEntry::kPresent | PageTableEntry::kUser | PageTableEntry::kAccessed);
  const auto writable = read_only.with_flags(read_only.flags() | PageTableEntry::kWritable | PageTableEntry::kDirty);
  {
    pv::LazyMmu lazy;
    // In chunks, draining a trace capture between them: 200,000 emulated writes make about
    // 7 MB of records, more than the buffer holds. The chunking keeps the check out of the
    // measured inner loop.
    constexpr uint64_t kChunk = 1024;
    for (uint64_t done = 0; done < count; done += kChunk) {
      uint64_t end = count - done < kChunk ? count : done + kChunk;
      for (uint64_t i = done; i < end; ++i) {
        if (pv::ops.set_entry(slot, (i & 1) ? writable : read_only) < 0) panic("pte bench write");
      }
      trace_capture::poll();
    }
  }
  if (pv::ops.set_entry(slot, PageTableEntry()) < 0) panic("pte bench clear");
  if (pv::ops.unpin(table) < 0) panic("unpinning the scratch L1");
  constexpr uint64_t kWritableData =
      PageTableEntry::kPresent | PageTableEntry::kWritable | PageTableEntry::kAccessed | PageTableEntry::kDirty;
  if (pv::ops.set_kernel_mapping(mfn_to_va(table), PageTableEntry::make(table, kWritableData)) < 0) {
    panic("remapping the scratch L1");
  }
  page_allocator.free(mfn_to_pfn(table));
  page_allocator.free(scratch);
  return 0;
}

long sys_pvhv_debugreg(uint64_t operation, uint64_t reg, uint64_t value) {
  switch (operation) {
    case PVHV_DEBUGREG_set: return arch::hypercall(__HYPERVISOR_set_debugreg, reg, value);
    case PVHV_DEBUGREG_get: return arch::hypercall(__HYPERVISOR_get_debugreg, reg);
    default: return -kEINVAL;
  }
}

}  // namespace kernel
