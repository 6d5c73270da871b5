// Port I/O: the only way to reach the UART, the PIT and the exit device.
#pragma once
#include <stdint.h>

namespace io {
inline void out8(uint16_t port, uint8_t value) { asm volatile("outb %0, %1" ::"a"(value), "Nd"(port)); }
inline void out32(uint16_t port, uint32_t value) { asm volatile("outl %0, %1" ::"a"(value), "Nd"(port)); }
inline void out16(uint16_t port, uint16_t value) { asm volatile("outw %0, %1" ::"a"(value), "Nd"(port)); }
inline uint16_t in16(uint16_t port) {
  uint16_t value;
  asm volatile("inw %1, %0" : "=a"(value) : "Nd"(port));
  return value;
}
inline uint32_t in32(uint16_t port) {
  uint32_t value;
  asm volatile("inl %1, %0" : "=a"(value) : "Nd"(port));
  return value;
}
inline uint8_t in8(uint16_t port) {
  uint8_t value;
  asm volatile("inb %1, %0" : "=a"(value) : "Nd"(port));
  return value;
}
}  // namespace io
