// A PV guest's virtual I/O privilege level. The guest always runs without real I/O privilege
// (IOPL 0: it could otherwise clear the real interrupt flag behind the hypervisor's back), so
// its cli, sti, in and out fault with #GP; the hypervisor then compares the level the guest set
// (PHYSDEVOP_set_iopl, or with VMASST_TYPE_architectural_iopl the IOPL of each HYPERVISOR_iret
// frame) with the privilege level the faulting code counts as, as Xen 4.17's iopl_ok does.
#pragma once

namespace virtual_iopl {
// The level guest code counts as: user mode 3; its kernel 1 under the classic ABI (a 64-bit PV
// kernel runs in ring 3, but PHYSDEVOP_set_iopl's levels are those of a ring-1 kernel), 0 once
// the guest enabled VMASST_TYPE_architectural_iopl.
constexpr unsigned privilege_level(bool kernel_mode, bool architectural) {
  return kernel_mode ? (architectural ? 0 : 1) : 3;
}
// Whether code at that level may use I/O instructions and cli/sti under `iopl` (0..3).
constexpr bool allows(unsigned iopl, bool kernel_mode, bool architectural) {
  return privilege_level(kernel_mode, architectural) <= iopl;
}
}  // namespace virtual_iopl
