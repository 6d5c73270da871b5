#include "pv-kernel-patches/vcpu_identity.h"

namespace kernel {

alignas(16) uint8_t secondary_stacks[kMaxVcpus - 1][kSecondaryStackBytes];

namespace {
vcpu_info_t* registered[kMaxVcpus];  // [0] unused: vCPU 0's is shared_info.h's registered_vcpu_info
}  // namespace

vcpu_info_t* vcpu_info_of(unsigned id) {
  if (id == 0) return vcpu();
  return registered[id] ? registered[id] : &shared_info()->vcpu_info[id];
}

void set_registered_vcpu_info(unsigned id, vcpu_info_t* info) {
  if (id > 0 && id < kMaxVcpus) registered[id] = info;
}

}  // namespace kernel
