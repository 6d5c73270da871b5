#pragma once
// Acquire loads and release stores of a word another vCPU writes or reads (the kernel's
// mailboxes between its vCPUs, the self-tests' shared counters): the pairing that makes what
// one vCPU wrote before its store visible to the vCPU whose load sees the store.

namespace guest_atomic {
template <typename T>
T load_acquire(const T& value) {
  return __atomic_load_n(&value, __ATOMIC_ACQUIRE);
}
template <typename T>
void store_release(T& place, T value) {
  __atomic_store_n(&place, value, __ATOMIC_RELEASE);
}
}  // namespace guest_atomic
