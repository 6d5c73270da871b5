// selftest=unprivileged: run in a domU, checks that the hypervisor refuses it what only a
// privileged domain may do, with Xen 4.17's error codes:
//  - sysctl (do_sysctl, xen/common/sysctl.c): copied in, the interface version checked
//    (-EACCES), then xsm_sysctl(XSM_PRIV) refuses every command (-EPERM): tbuf_op, perfc_op.
//  - PHYSDEVOP_set_iopl (xen/arch/x86/physdev.c) checks only the range: a domU may raise its
//    virtual IOPL, but has no I/O port permission, so its port reads give all ones
//    (guest_io_read in pv/emul-priv-op.c) and writes are dropped.
//  - mmu_update naming another domain as the page owner (foreigndom): get_pg_owner finds
//    dom0, then xsm_mmu_update(XSM_TARGET) refuses a domU: -EPERM; a domain that does not
//    exist: -ESRCH (get_pg_owner).
//  - mmu_update of an L1 entry naming a frame of another domain: get_page_from_l1e
//    (xen/arch/x86/mm.c) finds a real owner that is not the page owner and fails with
//    -EBUSY ("could_not_pin"); a frame beyond RAM is I/O memory the domU has no
//    iomem permission for: -EPERM.
#define __XEN_TOOLS__ 1  // sysctl.h is the tools' interface (guest handles need it)
#include <stdint.h>
#include <xen/physdev.h>
#include <xen/sysctl.h>

#include "arch/hypercall.h"
#include "arch/io_port.h"
#include "arch/xen.h"
#include "kernel/boot/boot_info.h"
#include "kernel/memory/physical_memory.h"
#include "selftest/memory/selftest_ptwr_assist.h"
#include "selftest/control/control_selftests.h"
#include "selftest/memory/memory_selftests.h"
#include "kernel/measurement/trace_capture.h"

namespace kernel {
namespace {
constexpr uint64_t kReadOnly = PageTableEntry::kPresent | PageTableEntry::kAccessed;
constexpr uint16_t kCom2Scratch = 0x2ff;  // COM2's scratch register: dom0's trace port

long sysctl(xen_sysctl_t& request) { return arch::hypercall(__HYPERVISOR_sysctl, arch::arg(&request)); }

long perfc_query() {
  xen_sysctl_t request{};
  request.cmd = XEN_SYSCTL_perfc_op;
  request.interface_version = XEN_SYSCTL_INTERFACE_VERSION;
  request.u.perfc_op.cmd = XEN_SYSCTL_PERFCOP_query;
  return sysctl(request);
}

void control_operations(SelfTest& test) {
  test.check("start_info says unprivileged",
             static_cast<long>(boot_info.start_info->flags & (SIF_PRIVILEGED | SIF_INITDOMAIN)), 0);
  test.check("sysctl tbuf_op get_info is refused", trace_capture::tbuf_op(XEN_SYSCTL_TBUFOP_get_info, 0), -XEN_EPERM);
  test.check("sysctl tbuf_op enable is refused", trace_capture::tbuf_op(XEN_SYSCTL_TBUFOP_enable, 0), -XEN_EPERM);
  test.check("sysctl perfc_op query is refused", perfc_query(), -XEN_EPERM);
  xen_sysctl_t stale{};
  stale.cmd = XEN_SYSCTL_tbuf_op;
  stale.interface_version = XEN_SYSCTL_INTERFACE_VERSION - 1;
  test.check("sysctl with a stale interface version: -EACCES before the privilege check", sysctl(stale), -XEN_EACCES);
}

long set_iopl(uint32_t iopl) {
  physdev_set_iopl_t request{iopl};
  return arch::hypercall(__HYPERVISOR_physdev_op, PHYSDEVOP_set_iopl, arch::arg(&request));
}

void io_ports(SelfTest& test) {
  test.check("physdev set_iopl 1 is accepted (virtual IOPL)", set_iopl(1), 0);
  test.check("a port read without I/O permission gives all ones", arch::in8(kCom2Scratch), 0xff);
  // The string form, emulated element by element: all ones, rcx counted down, rdi advanced.
  uint8_t buffer[4] = {1, 2, 3, 4};
  uint64_t left = sizeof(buffer);
  uint8_t* at = buffer;
  asm volatile("rep insb" : "+D"(at), "+c"(left) : "d"(uint16_t(kCom2Scratch)) : "memory");
  test.check("rep insb without I/O permission fills all ones",
             buffer[0] == 0xff && buffer[1] == 0xff && buffer[2] == 0xff && buffer[3] == 0xff, true);
  test.check("... with rcx counted down and rdi advanced", left == 0 && at == buffer + sizeof(buffer), true);
  test.check("physdev set_iopl 4 is refused", set_iopl(4), -XEN_EINVAL);
  test.check("physdev set_iopl 0", set_iopl(0), 0);
}

// A frame of another domain: its M2P entry names a pseudo-physical frame (the hypervisor's
// own and free frames have none) that is not one of ours. Our memory is one run of machine
// frames built after dom0's, so the search goes down from just below it.
bool names_a_guest_frame(uint64_t m2p_entry) { return m2p_entry < (1ull << 40); }

bool ours(Mfn mfn) {
  uint64_t pfn = machine_to_phys_mapping[mfn.value];
  return pfn < boot_info.nr_pages && boot_info.p2m[pfn] == mfn.value;
}

Mfn another_domains_frame() {
  constexpr uint64_t kSearch = 256;
  for (uint64_t mfn = boot_info.p2m[0]; mfn > 0 && boot_info.p2m[0] - mfn < kSearch;) {
    --mfn;
    if (names_a_guest_frame(machine_to_phys_mapping[mfn]) && !ours(Mfn{mfn})) return Mfn{mfn};
  }
  return Mfn{0};
}

// One mmu_update of `slot` on behalf of page owner `foreign_domain`.
long mmu_update_as(const pv::PageTableSlot& slot, uint64_t value, uint16_t foreign_domain) {
  mmu_update_t request{slot.machine_address | MMU_NORMAL_PT_UPDATE, value};
  unsigned done = 0;
  return arch::hypercall(__HYPERVISOR_mmu_update, arch::arg(&request), 1, arch::arg(&done), foreign_domain);
}

void foreign_owner(SelfTest& test) {
  pv::PageTableSlot slot = scratch_slot();
  uint64_t current = read_entry(slot).raw();
  test.check("mmu_update on behalf of dom0 (foreigndom 0) is refused", mmu_update_as(slot, current, 0), -XEN_EPERM);
  test.check("mmu_update on behalf of a domain that does not exist is refused", mmu_update_as(slot, current, 7),
             -XEN_ESRCH);
  test.check("mmu_update naming DOMID_XEN (the trace buffers' owner) is refused",
             mmu_update_as(slot, current, DOMID_XEN), -XEN_EPERM);
}

void foreign_frames(SelfTest& test) {
  pv::PageTableSlot slot = scratch_slot();
  Mfn foreign = another_domains_frame();
  test.note("foreign mfn (another domain's frame below our memory)", static_cast<long>(foreign.value));
  test.check("a frame of another domain was found", static_cast<long>(foreign.value != 0), 1);
  try_update(test, "map another domain's frame is refused", slot, PageTableEntry::make(foreign, kReadOnly).raw(),
             -XEN_EBUSY);
  long max_ram_page = xen::memory_op(XENMEM_maximum_ram_page, nullptr);
  try_update(test, "map a frame beyond the end of RAM (no I/O memory permission) is refused", slot,
             PageTableEntry::make(Mfn{static_cast<uint64_t>(max_ram_page) + 0x100000}, kReadOnly).raw(), -XEN_EPERM);
}
}  // namespace

void selftest_unprivileged(SelfTest& test) {
  control_operations(test);
  io_ports(test);
  foreign_owner(test);
  foreign_frames(test);
  check_ptwr_assist(test);
}

}  // namespace kernel
