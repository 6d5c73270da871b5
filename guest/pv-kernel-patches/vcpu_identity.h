#pragma once
// Which vCPU this code runs on, and where each vCPU's vcpu_info is. vCPU 0 runs the whole
// kernel (boot stack, process kernel stacks); every other vCPU runs only on its own kernel
// stack here, so the stack pointer names the vCPU (kernel/smp brings them up). Each vCPU's
// vcpu_info is its slot in shared_info until VCPUOP_register_vcpu_info moves it.
#include <stddef.h>
#include <stdint.h>

#include "arch/xen.h"
#include "pv-kernel-patches/shared_info.h"

namespace kernel {

inline constexpr unsigned kMaxVcpus = 8;  // the hypervisor's per-domain limit
inline constexpr size_t kSecondaryStackBytes = 16384;

// vCPU k's stack is secondary_stacks[k - 1] (k >= 1).
extern uint8_t secondary_stacks[kMaxVcpus - 1][kSecondaryStackBytes];

inline unsigned current_vcpu_id() {
  uint64_t rsp;
  asm volatile("mov %%rsp, %0" : "=r"(rsp));
  const uint64_t offset = rsp - reinterpret_cast<uint64_t>(secondary_stacks);
  return offset < sizeof(secondary_stacks) ? unsigned(offset / kSecondaryStackBytes) + 1 : 0;
}
inline uint64_t secondary_stack_top(unsigned id) {
  return reinterpret_cast<uint64_t>(secondary_stacks[id - 1]) + kSecondaryStackBytes;
}

// The vcpu_info of vCPU `id` (< kMaxVcpus).
vcpu_info_t* vcpu_info_of(unsigned id);
// Where VCPUOP_register_vcpu_info moved a secondary vCPU's (id >= 1).
void set_registered_vcpu_info(unsigned id, vcpu_info_t* info);

}  // namespace kernel
