#pragma once
// Port I/O for the guest kernel. Without I/O privilege (PHYSDEVOP_set_iopl) every access
// faults and the hypervisor performs it, as Xen does.
#include <stdint.h>

namespace arch {
inline void out8(uint16_t port, uint8_t value) { asm volatile("outb %0, %1" ::"a"(value), "Nd"(port)); }
inline uint8_t in8(uint16_t port) {
  uint8_t value;
  asm volatile("inb %1, %0" : "=a"(value) : "Nd"(port));
  return value;
}
inline void out32(uint16_t port, uint32_t value) { asm volatile("outl %0, %1" ::"a"(value), "Nd"(port)); }
inline uint32_t in32(uint16_t port) {
  uint32_t value;
  asm volatile("inl %1, %0" : "=a"(value) : "Nd"(port));
  return value;
}
}  // namespace arch
