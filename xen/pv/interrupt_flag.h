// cli and sti from a PV guest kernel. It runs in ring 3 without I/O privilege, so both raise
// #GP; its real interrupt flag is its event mask in vcpu_info, which these instructions never
// touch. Xen 4.17 performs them as no-ops for a kernel whose virtual IOPL lets it use I/O
// (PHYSDEVOP_set_iopl, iopl >= 1: Linux's dom0 sets it in xen_start_kernel and meets a raw
// cli before its paravirt operations are in place) and leaves them the guest's #GP otherwise.
#pragma once
#include <stddef.h>
#include <stdint.h>

namespace interrupt_flag {
// The length of a cli or sti at `bytes` (no prefix), or 0.
constexpr unsigned instruction_length(const uint8_t* bytes, size_t available) {
  return available >= 1 && (bytes[0] == 0xfa || bytes[0] == 0xfb) ? 1 : 0;
}
// Xen's iopl_ok for a guest kernel: its virtual IOPL at least 1.
constexpr bool permitted(unsigned virtual_iopl) { return virtual_iopl >= 1; }
}  // namespace interrupt_flag
