// selftest=hypercall: bad hypercall numbers, sub-ops and guest pointers are refused cleanly.
#include "arch/xen.h"
#include "kernel/boot/boot_info.h"
#include "selftest/cpu/cpu_selftests.h"
#include <xen/features.h>
#include <xen/version.h>
#include "pv-kernel-patches/pv_ops.h"

namespace kernel {
namespace {

// Nothing is mapped here before init starts (the user half of the kernel L4 is empty).
constexpr uint64_t kUnmappedUser = 0x0000000010000000ull;
// Inside the hypervisor's own range: never a valid guest pointer.
constexpr uint64_t kHypervisorAddress = 0xffff830000000000ull;

}  // namespace

namespace {
// Xen 4.17's XENVER_get_features for a 64-bit PV guest, which Linux reads first: this kernel's
// PAE_MODE "yes" gets it the pae_extended_cr3 assist, hence pae_pgdir_above_4gb.
void features(SelfTest& test) {
  xen_feature_info_t info{};
  info.submap_idx = 0;
  test.check("XENVER_get_features submap 0 works",
             arch::hypercall(__HYPERVISOR_xen_version, XENVER_get_features, arch::arg(&info)), 0);
  const uint32_t pv = (1u << XENFEAT_memory_op_vnode_supported) | (1u << XENFEAT_mmu_pt_update_preserve_ad) |
                      (1u << XENFEAT_highmem_assist) | (1u << XENFEAT_gnttab_map_avail_bits) |
                      (1u << XENFEAT_direct_mapped);
  const uint32_t dom0 = (boot_info.start_info->flags & SIF_PRIVILEGED) ? 1u << XENFEAT_dom0 : 0;
  test.check("its bits are Xen's for a PV guest", info.submap, pv | dom0 | (1u << XENFEAT_pae_pgdir_above_4gb));
  info.submap_idx = 1;
  test.check("XENVER_get_features submap 1 is -EINVAL",
             arch::hypercall(__HYPERVISOR_xen_version, XENVER_get_features, arch::arg(&info)), -XEN_EINVAL);
}
}  // namespace

void selftest_hypercall(SelfTest& test) {
  features(test);
  test.check("unknown hypercall 63 returns -ENOSYS", arch::hypercall(63), -XEN_ENOSYS);
  test.check("unknown hypercall 100 returns -ENOSYS", arch::hypercall(100), -XEN_ENOSYS);
  test.check("console_io with unknown sub-op returns -ENOSYS", arch::hypercall(__HYPERVISOR_console_io, 77, 0, 0),
             -XEN_ENOSYS);
  test.check("console_io write from an unmapped buffer returns -EFAULT",
             arch::hypercall(__HYPERVISOR_console_io, CONSOLEIO_write, 16, kUnmappedUser), -XEN_EFAULT);
  test.check("console_io write from a hypervisor address returns -EFAULT",
             arch::hypercall(__HYPERVISOR_console_io, CONSOLEIO_write, 16, kHypervisorAddress), -XEN_EFAULT);
  test.check("mmu_update with an unmapped request array returns -EFAULT",
             arch::hypercall(__HYPERVISOR_mmu_update, kUnmappedUser, 1, 0, DOMID_SELF), -XEN_EFAULT);
  // One request with no `done` is the hypervisor's one-request path (hypercall/mmu_ops.cpp).
  test.check("mmu_update of one request in the hypervisor's range returns -EFAULT",
             arch::hypercall(__HYPERVISOR_mmu_update, kHypervisorAddress, 1, 0, DOMID_SELF), -XEN_EFAULT);
  test.check("mmu_update of one request at a non-canonical address returns -EFAULT",
             arch::hypercall(__HYPERVISOR_mmu_update, 0x0000800000000000ull, 1, 0, DOMID_SELF), -XEN_EFAULT);
  {
    // Xen's guest_handle_okay: a list starting outside the guest is refused before anything is
    // done or counted, whatever the count.
    unsigned done = 7;
    test.check("mmu_update of two requests in the hypervisor's range returns -EFAULT",
               arch::hypercall(__HYPERVISOR_mmu_update, kHypervisorAddress, 2, arch::arg(&done), DOMID_SELF),
               -XEN_EFAULT);
    test.check("  leaving its done count alone", done, 7);
    test.check("mmu_update of no request in the hypervisor's range returns -EFAULT",
               arch::hypercall(__HYPERVISOR_mmu_update, kHypervisorAddress, 0, arch::arg(&done), DOMID_SELF),
               -XEN_EFAULT);
    test.check("mmuext_op of two operations in the hypervisor's range returns -EFAULT",
               arch::hypercall(__HYPERVISOR_mmuext_op, kHypervisorAddress, 2, arch::arg(&done), DOMID_SELF),
               -XEN_EFAULT);
    test.check("  leaving its done count alone", done, 7);
  }
  test.check("mmuext_op with an unmapped request array returns -EFAULT",
             arch::hypercall(__HYPERVISOR_mmuext_op, kUnmappedUser, 1, 0, DOMID_SELF), -XEN_EFAULT);
  test.check("sched_op with unknown command returns -ENOSYS", arch::hypercall(__HYPERVISOR_sched_op, 99, 0),
             -XEN_ENOSYS);
  test.check("event_channel_op with unknown command returns -ENOSYS",
             arch::hypercall(__HYPERVISOR_event_channel_op, 99, 0), -XEN_ENOSYS);
  test.check("memory_op with unknown command returns -ENOSYS", arch::hypercall(__HYPERVISOR_memory_op, 99, 0),
             -XEN_ENOSYS);
  test.check("mmuext_op with unknown command returns -ENOSYS", pv::ops.raw_mmuext(99, 0), -XEN_ENOSYS);
}

}  // namespace kernel
