#include "pv-kernel-patches/callbacks.h"

#include "arch/xen.h"
#include "kernel/console/panic.h"

extern "C" {
void event_callback_entry();
void failsafe_callback_entry();
void syscall_callback_entry();
}

namespace pv {
namespace {

void register_callback(unsigned type, void (*entry)(), unsigned flags, const char* name) {
  long rc = xen::callback_register(type, reinterpret_cast<uint64_t>(entry), flags);
  if (rc < 0) kernel::panic("registering the %s callback: %ld", name, rc);
}

}  // namespace

void callbacks_install() {
  // Event upcalls always arrive with events masked. The failsafe and syscall callbacks ask
  // for the same, so their entry code never races an upcall on the same stack.
  register_callback(CALLBACKTYPE_event, event_callback_entry, 0, "event");
  register_callback(CALLBACKTYPE_failsafe, failsafe_callback_entry, CALLBACKF_mask_events, "failsafe");
  register_callback(CALLBACKTYPE_syscall, syscall_callback_entry, CALLBACKF_mask_events, "syscall");
}

void vm_assists_install() {
  long rc = xen::vm_assist(VMASST_CMD_enable, VMASST_TYPE_writable_pagetables);
  if (rc < 0) kernel::panic("enabling the writable_pagetables VM assist: %ld", rc);
}

}  // namespace pv
