// Copies between the hypervisor and the running vCPU's virtual memory, directly on its own
// page tables (pv/guest_access). Bad guest pointers (unmapped, read-only for a write, in the
// hypervisor's range, non-canonical, wrapping, or of a vCPU that is not running) give false,
// which callers turn into -EFAULT.
#pragma once
#include <stddef.h>
#include <stdint.h>

struct Vcpu;

namespace guest_memory {
bool copy_from(const Vcpu& vcpu, void* to, uint64_t guest_va, size_t length);
bool copy_to(const Vcpu& vcpu, uint64_t guest_va, const void* from, size_t length);

template <typename T>
bool read(const Vcpu& vcpu, uint64_t guest_va, T& value) { return copy_from(vcpu, &value, guest_va, sizeof(T)); }
template <typename T>
bool write(const Vcpu& vcpu, uint64_t guest_va, const T& value) { return copy_to(vcpu, guest_va, &value, sizeof(T)); }
}  // namespace guest_memory
