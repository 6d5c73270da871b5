// selftest=iomem: run in dom0, which holds I/O-memory permission for everything below the
// machine's address width except the interrupt hardware the hypervisor keeps for itself.
// Xen 4.17 (dom0_setup_permissions in xen/arch/x86/dom0_build.c) denies dom0 the local APIC
// page, the MSI address range 0xfee00000-0xfeefffff and every IO-APIC page that is not in
// its read-only MMIO set; an L1 entry naming a denied frame fails in get_page_from_l1e with
// -EPERM ("non-privileged attempt to map MMIO space"). Any other frame outside RAM is
// accepted. Each mmu_update here rewrites the L1 slot of a scratch page of the image; an
// accepted one is undone at once.
#include "arch/xen.h"
#include "kernel/physical_memory.h"
#include "kernel/selftest.h"

namespace kernel {
namespace {
constexpr uint64_t kReadOnly = PageTableEntry::kPresent | PageTableEntry::kAccessed;
constexpr uint64_t kWritable = kReadOnly | PageTableEntry::kWritable | PageTableEntry::kDirty;

constexpr uint64_t kLocalApicFrame = 0xfee00;  // the architectural default of IA32_APIC_BASE
constexpr uint64_t kMsiFirstFrame = 0xfee00, kMsiLastFrame = 0xfeeff;
constexpr uint64_t kIoApicFrame = 0xfec00;     // the PC's first IO-APIC

uint64_t entry(uint64_t mfn, uint64_t flags) { return PageTableEntry::make(Mfn{mfn}, flags).raw(); }

void denied_frames(SelfTest& test) {
  pv::PageTableSlot slot = scratch_slot();
  try_update(test, "map the local APIC page read-only is refused", slot, entry(kLocalApicFrame, kReadOnly),
             -XEN_EPERM);
  try_update(test, "map the local APIC page writable is refused", slot, entry(kLocalApicFrame, kWritable),
             -XEN_EPERM);
  try_update(test, "map the second page of the MSI range is refused", slot, entry(kMsiFirstFrame + 1, kWritable),
             -XEN_EPERM);
  try_update(test, "map the last page of the MSI range is refused", slot, entry(kMsiLastFrame, kReadOnly),
             -XEN_EPERM);
  try_update(test, "map the IO-APIC page read-only", slot, entry(kIoApicFrame, kReadOnly), -XEN_EPERM);
  try_update(test, "map the IO-APIC page writable", slot, entry(kIoApicFrame, kWritable), -XEN_EPERM);
}

void permitted_frames(SelfTest& test) {
  pv::PageTableSlot slot = scratch_slot();
  // Just outside the MSI range, and well beyond RAM: I/O memory dom0 may map.
  try_update(test, "map the frame after the MSI range is accepted", slot, entry(kMsiLastFrame + 1, kReadOnly), 0);
  try_update(test, "map the frame before the MSI range is accepted", slot, entry(kMsiFirstFrame - 1, kReadOnly), 0);
}
}  // namespace

void selftest_iomem(SelfTest& test) {
  denied_frames(test);
  permitted_frames(test);
}

}  // namespace kernel
