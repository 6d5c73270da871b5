#include "console/serial.h"
#include "arch/x86/cpu/io_port.h"
#include "console/serial_transmitter.h"

namespace serial {
namespace {
constexpr uint16_t com1 = 0x3f8;
constexpr uint16_t data = com1, interrupt_enable = com1 + 1, fifo = com1 + 2, line_control = com1 + 3,
                   modem_control = com1 + 4, line_status = com1 + 5;
constexpr uint8_t transmit_empty = 0x20;

struct Com1 {
  bool ready() const { return io::in8(line_status) & transmit_empty; }
  void write(char c) const { io::out8(data, uint8_t(c)); }
};

constexpr uint32_t tx_ring_size = 16384;
char tx_storage[tx_ring_size];
Com1 com1_uart;
constinit console::SerialTransmitter<Com1> transmitter(com1_uart, tx_storage, tx_ring_size);
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
  if (c == '\n') transmitter.put('\r');
  transmitter.put(c);
}

bool has_room(size_t bytes) { return transmitter.has_room(bytes); }
void poll() { transmitter.poll(); }
void flush() { transmitter.flush(); }
bool pending() { return transmitter.pending(); }
}  // namespace serial
