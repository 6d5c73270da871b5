#pragma once
// Registers the entry points the hypervisor calls: event upcall, failsafe, syscall.

namespace arch {

void callbacks_install();

}  // namespace arch
