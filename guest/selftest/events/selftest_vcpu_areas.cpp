// selftest=vcpu-areas: the two vCPU areas Linux registers early, as Xen 4.17 serves them:
// VCPUOP_register_runstate_memory_area (the runstate written at once, RUNSTATE_running for the
// caller; an area in the hypervisor's range or an unreadable argument -EFAULT) and
// VCPUOP_register_vcpu_info (the vcpu_info moved into a frame of the guest's: a bad offset
// -ENXIO, a page table, a frame not the guest's and a second registration -EINVAL; after the move the
// hypervisor uses the new place: pending set, the time written there). The kernel then uses the
// new vcpu_info for the rest of its life. The same checks run on Xen 4.17.
#include "arch/hypercall.h"
#include "arch/xen.h"
#include "kernel/memory/physical_memory.h"
#include "selftest/events/events_selftests.h"
#include "pv-kernel-patches/shared_info.h"
#include <xen/vcpu.h>

namespace kernel {
namespace {
alignas(4096) uint8_t info_page[4096];
vcpu_runstate_info runstate;
constexpr long kEinval = -22, kEfault = -14, kEnxio = -6;
constexpr unsigned kOffset = 64;

long vcpu_op(unsigned command, const void* argument) {
  return arch::hypercall(__HYPERVISOR_vcpu_op, command, 0, reinterpret_cast<uint64_t>(argument));
}

long register_info(uint64_t mfn, uint32_t offset) {
  vcpu_register_vcpu_info request{};
  request.mfn = mfn;
  request.offset = offset;
  return vcpu_op(VCPUOP_register_vcpu_info, &request);
}
}  // namespace

void selftest_vcpu_areas(SelfTest& test) {
  vcpu_register_runstate_memory_area area{};
  area.addr.v = reinterpret_cast<vcpu_runstate_info*>(0xffff800000001000ull);
  test.check("a runstate area in the hypervisor's range is -EFAULT",
             vcpu_op(VCPUOP_register_runstate_memory_area, &area), kEfault);
  test.check("an unreadable runstate argument is -EFAULT",
             vcpu_op(VCPUOP_register_runstate_memory_area, reinterpret_cast<void*>(0x8000000000000000ull)), kEfault);
  runstate.state = -1;
  area.addr.v = &runstate;
  test.check("register_runstate_memory_area works", vcpu_op(VCPUOP_register_runstate_memory_area, &area), 0);
  test.check("and wrote RUNSTATE_running at once", runstate.state, RUNSTATE_running);
  test.check("with an entry time", runstate.state_entry_time != 0, true);

  const uint64_t frame = va_to_mfn(reinterpret_cast<uint64_t>(info_page)).value;
  test.check("an offset leaving no room for a vcpu_info is -ENXIO", register_info(frame, 4096 - 8), kEnxio);
  test.check("a misaligned offset is -ENXIO", register_info(frame, 4), kEnxio);
  test.check("a page table (the kernel's L4) is -EINVAL", register_info(kernel_l4().value, 0), kEinval);
  test.check("a frame beyond memory is -EINVAL", register_info(0x0fffffffffffffull, 0), kEinval);
  test.check("an unreadable argument is -EFAULT",
             vcpu_op(VCPUOP_register_vcpu_info, reinterpret_cast<void*>(0x8000000000000000ull)), kEfault);
  auto* moved = reinterpret_cast<volatile vcpu_info_t*>(info_page + kOffset);
  const uint8_t mask = vcpu()->evtchn_upcall_mask;
  test.check("register_vcpu_info works", register_info(frame, kOffset), 0);
  test.check("the event mask came along", moved->evtchn_upcall_mask, mask);
  test.check("and every event is marked pending", moved->evtchn_upcall_pending, 1);
  registered_vcpu_info = const_cast<vcpu_info_t*>(moved);
  test.check("a second registration is -EINVAL", register_info(frame, 0), kEinval);
  const uint32_t version = moved->time.version;
  arch::hypercall(__HYPERVISOR_sched_op, SCHEDOP_yield, 0);
  test.check("the hypervisor keeps the time in the new place", moved->time.system_time != 0, true);
  test.note("time version before and after a yield", (long(version) << 32) | moved->time.version);
}
}  // namespace kernel
