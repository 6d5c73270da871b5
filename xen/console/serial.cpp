#include "console/serial.h"
#include "arch/x86/cpu/io_port.h"

namespace serial {
namespace {
constexpr uint16_t com1 = 0x3f8;
constexpr uint16_t data = com1, interrupt_enable = com1 + 1, fifo = com1 + 2, line_control = com1 + 3,
                   modem_control = com1 + 4, line_status = com1 + 5;
constexpr uint8_t transmit_empty = 0x20;
}  // namespace

void init() {
  io::out8(interrupt_enable, 0);
  io::out8(line_control, 0x80);  // divisor latch: 115200 baud
  io::out8(data, 1);
  io::out8(interrupt_enable, 0);
  io::out8(line_control, 0x03);  // 8n1
  io::out8(fifo, 0xc7);
  io::out8(modem_control, 0x03);
}

void put(char c) {
  if (c == '\n') put('\r');
  while (!(io::in8(line_status) & transmit_empty)) {
  }
  io::out8(data, uint8_t(c));
}
}  // namespace serial
