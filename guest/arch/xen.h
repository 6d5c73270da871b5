#pragma once
// The Xen public headers (the ABI) plus typed wrappers for the hypercalls this kernel uses.
// Page-table hypercalls are deliberately absent here: they belong to pv-kernel-patches/.
#include <stddef.h>
#include <stdint.h>

#include <xen/xen.h>
#include <xen/callback.h>
#include <xen/event_channel.h>
#include <xen/memory.h>
#include <xen/sched.h>
#include <xen/vcpu.h>
#include <xen/version.h>
#include <xen/errno.h>

#include "arch/hypercall.h"

namespace xen {

inline long console_write(const char* text, size_t length) {
  return arch::hypercall(__HYPERVISOR_console_io, CONSOLEIO_write, length, arch::arg(text));
}

inline long set_trap_table(const trap_info_t* table) {
  return arch::hypercall(__HYPERVISOR_set_trap_table, arch::arg(table));
}

inline long callback_register(unsigned type, uint64_t address, unsigned flags) {
  callback_register_t request{};
  request.type = static_cast<uint16_t>(type);
  request.flags = static_cast<uint16_t>(flags);
  request.address = address;
  return arch::hypercall(__HYPERVISOR_callback_op, CALLBACKOP_register, arch::arg(&request));
}

template <typename Request>
inline long event_channel_op(unsigned command, Request* request) {
  return arch::hypercall(__HYPERVISOR_event_channel_op, command, arch::arg(request));
}

inline long vm_assist(unsigned command, unsigned type) {
  return arch::hypercall(__HYPERVISOR_vm_assist, command, type);
}

inline long sched_op(unsigned command, void* argument) {
  return arch::hypercall(__HYPERVISOR_sched_op, command, arch::arg(argument));
}

[[noreturn]] inline void shutdown(unsigned reason) {
  for (;;) {
    sched_shutdown_t request{};
    request.reason = reason;
    sched_op(SCHEDOP_shutdown, &request);
  }
}

inline long set_timer(uint64_t absolute_system_time_ns) {
  return arch::hypercall(__HYPERVISOR_set_timer_op, absolute_system_time_ns);
}

inline long vcpu_op(unsigned command, unsigned vcpu, void* argument) {
  return arch::hypercall(__HYPERVISOR_vcpu_op, command, vcpu, arch::arg(argument));
}

inline long memory_op(unsigned command, void* argument) {
  return arch::hypercall(__HYPERVISOR_memory_op, command, arch::arg(argument));
}

inline long xen_version(unsigned command, void* argument) {
  return arch::hypercall(__HYPERVISOR_xen_version, command, arch::arg(argument));
}

}  // namespace xen
