#pragma once
// Registers the entry points the hypervisor calls: event upcall, failsafe, syscall.

namespace pv {

void callbacks_install();
// The VM assists the kernel runs with: writable_pagetables (its plain stores to its own L1
// tables emulated, or detached, by the hypervisor, as Linux asks for them; without it Xen
// bounces them to a domU as page faults).
void vm_assists_install();

}  // namespace pv
