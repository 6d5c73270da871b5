#pragma once
#include "abi/xen_abi.h"

namespace mm {

// The L4 tables a vCPU runs on. Each non-zero one holds a general ref and an L4 type ref.
// 0 means "none", as in the ABI (NEW_USER_BASEPTR with mfn 0 clears the user table), so
// frame 0 can never be a base pointer (it is never guest RAM: the first MiB is I/O).
struct VcpuBasePointers {
  uint64_t kernel_mfn = 0;
  uint64_t user_mfn = 0;
};

}  // namespace mm
