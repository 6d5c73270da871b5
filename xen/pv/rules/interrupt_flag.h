// cli and sti from a PV guest. It runs in ring 3 without I/O privilege, so both raise #GP; its
// real interrupt flag is its event mask in vcpu_info, which these instructions never touch.
// Xen 4.17 performs them as no-ops when the guest's virtual IOPL allows them to the code that
// ran them (pv/rules/virtual_iopl.h: a kernel with iopl >= 1, or any with architectural IOPL; user
// mode with iopl 3) and leaves them the guest's #GP otherwise. Linux's dom0 sets iopl 1 in
// xen_start_kernel and meets a raw cli before its paravirt operations are in place.
#pragma once
#include <stddef.h>
#include <stdint.h>

namespace interrupt_flag {
// The length of a cli or sti at `bytes` (no prefix), or 0.
constexpr unsigned instruction_length(const uint8_t* bytes, size_t available) {
  return available >= 1 && (bytes[0] == 0xfa || bytes[0] == 0xfb) ? 1 : 0;
}
}  // namespace interrupt_flag
