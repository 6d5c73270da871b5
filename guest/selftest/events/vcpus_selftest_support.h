#pragma once
// What selftest=vcpus and its hostile half share: VCPUOP calls on a vCPU by id, a scratch
// context, the checks run before and after the other vCPUs are up.
#include "arch/hypercall.h"
#include "arch/xen.h"
#include "kernel/smp/vcpus.h"
#include "selftest/selftest.h"

namespace kernel::vcpu_tests {

constexpr uint64_t kUnmapped = 0xffff800000000000ull;  // the hypervisor's range: never readable

// A VCPUOP without argument (up, down, is_up, stop timers).
inline long vcpu_op_on(int command, uint64_t vcpu) {
  return arch::hypercall(__HYPERVISOR_vcpu_op, uint64_t(uint32_t(command)), vcpu, 0);
}
inline long initialise(uint64_t vcpu, const vcpu_guest_context& context) {
  return arch::hypercall(__HYPERVISOR_vcpu_op, VCPUOP_initialise, vcpu, arch::arg(&context));
}
inline long runstate_of(uint64_t vcpu, vcpu_runstate_info& info) {
  return arch::hypercall(__HYPERVISOR_vcpu_op, VCPUOP_get_runstate_info, vcpu, arch::arg(&info));
}
inline long register_vcpu_info(uint64_t vcpu, uint64_t mfn, uint32_t offset) {
  vcpu_register_vcpu_info request{};
  request.mfn = mfn;
  request.offset = offset;
  return arch::hypercall(__HYPERVISOR_vcpu_op, VCPUOP_register_vcpu_info, vcpu, arch::arg(&request));
}
// A request naming `area` (the structure must outlive the call only).
inline vcpu_register_runstate_memory_area* area_request(vcpu_runstate_info* area) {
  static vcpu_register_runstate_memory_area request;
  request = vcpu_register_runstate_memory_area{};
  request.addr.v = area;
  return &request;
}

// Blocks vCPU 0 until vCPU `id` is blocked (its work done and back in its loop): what the
// hypervisor reports of it is then settled, also when it runs on another CPU (Xen).
inline bool wait_blocked(uint64_t id) {
  const uint64_t deadline = smp::now_ns() + 2'000'000'000;
  vcpu_runstate_info info{};
  while (smp::now_ns() < deadline) {
    if (runstate_of(id, info) == 0 && info.state == RUNSTATE_blocked) return true;
    xen::sched_op(SCHEDOP_yield, nullptr);
  }
  return false;
}

// A 5 KiB context off the stack, for the calls that are refused before they look at it.
vcpu_guest_context& scratch_context();

// selftest_vcpus_hostile.cpp: the refusals while only vCPU 0 runs (the last vCPU is the one
// given bad contexts: it stays without one), and those once every vCPU is up.
void vcpus_hostile_before_bring_up(SelfTest& test, unsigned count);
void vcpus_hostile_after_bring_up(SelfTest& test, unsigned count);

}  // namespace kernel::vcpu_tests
