// selftest=time-area: VCPUOP_register_vcpu_time_memory_area as Xen 4.17's arch_do_vcpu_op
// serves it (Linux's xen_setup_vsyscall_time_info registers its vDSO pvclock page with it):
// the second vcpu_time_info written at once, whole (an even version) and with the scale of
// the one in vcpu_info; an area starting outside the guest's part (the hypervisor's range,
// the non-canonical hole) or an unreadable argument -EFAULT; one that only runs into the hole
// or wraps, an unmapped guest address and 0 (which stops the updates) accepted; another vCPU -ENOENT. The same
// checks run on Xen 4.17.
#include "arch/hypercall.h"
#include "arch/xen.h"
#include "selftest/events/events_selftests.h"
#include "pv-kernel-patches/shared_info.h"
#include <xen/vcpu.h>

namespace kernel {
namespace {
alignas(64) volatile vcpu_time_info_t area_time;

long register_area(uint64_t address, unsigned vcpu = 0) {
  vcpu_register_time_memory_area_t request{};
  request.addr.v = reinterpret_cast<vcpu_time_info_t*>(address);
  return arch::hypercall(__HYPERVISOR_vcpu_op, VCPUOP_register_vcpu_time_memory_area, vcpu, arch::arg(&request));
}
}  // namespace

void selftest_time_area(SelfTest& test) {
  const uint64_t address = reinterpret_cast<uint64_t>(&area_time);
  test.check("VCPUOP_register_vcpu_time_memory_area works", register_area(address), 0);
  const volatile vcpu_time_info_t& primary = shared_info()->vcpu_info[0].time;
  test.check("  the area was written: its version is even and not 0",
             area_time.version != 0 && (area_time.version & 1) == 0, true);
  test.check("  with vcpu_info's scale (mul)", area_time.tsc_to_system_mul, long(primary.tsc_to_system_mul));
  test.check("  and shift", area_time.tsc_shift, long(primary.tsc_shift));
  test.check("  and a system time", area_time.system_time != 0, true);
  test.check("  no later than vcpu_info's", area_time.system_time <= primary.system_time, true);
  test.check("  and the flags of vcpu_info's", area_time.flags, long(primary.flags));

  test.check("an area in the hypervisor's range is -EFAULT", register_area(0xffff800000001000ull), -XEN_EFAULT);
  test.check("an area in the non-canonical hole is -EFAULT", register_area(0x0000800000000000ull), -XEN_EFAULT);
  // Xen's guest_handle_okay checks the start only: these are accepted (their writes fault).
  test.check("an area running into the hole is accepted", register_area(0x00007ffffffffff0ull), 0);
  test.check("an area that wraps is accepted", register_area(0xfffffffffffffff0ull), 0);
  test.check("an unreadable argument is -EFAULT",
             arch::hypercall(__HYPERVISOR_vcpu_op, VCPUOP_register_vcpu_time_memory_area, 0, 0xffff800000000000ull),
             -XEN_EFAULT);
  test.check("the area for vCPU 1 (not the domain's) is -ENOENT", register_area(address, 1), -XEN_ENOENT);
  test.check("an unmapped guest address is accepted", register_area(0x1000), 0);
  test.check("0 stops the updates", register_area(0), 0);
}
}  // namespace kernel
