#include "console/serial.h"
#include "arch/x86/cpu/io_port.h"
#include "console/serial_tx_ring.h"

namespace serial {
namespace {
constexpr uint16_t com1 = 0x3f8;
constexpr uint16_t data = com1, interrupt_enable = com1 + 1, fifo = com1 + 2, line_control = com1 + 3,
                   modem_control = com1 + 4, line_status = com1 + 5;
constexpr uint8_t transmit_empty = 0x20;
// The 16550's transmit FIFO: empty when transmit_empty is set, so that many bytes go at once.
constexpr unsigned fifo_depth = 16;

constexpr uint32_t tx_ring_size = 16384;
char tx_storage[tx_ring_size];
constinit console::SerialTxRing tx_ring(tx_storage, tx_ring_size);

bool uart_ready() { return io::in8(line_status) & transmit_empty; }

void put_byte(char c) {
  if (tx_ring.empty() && uart_ready()) {
    io::out8(data, uint8_t(c));
    return;
  }
  while (!tx_ring.push(c)) poll();  // full: each pass that finds the UART ready makes room
}
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
  poll();  // what waits goes first
  if (c == '\n') put_byte('\r');
  put_byte(c);
}

bool has_room(size_t bytes) { return bytes <= tx_ring.room(); }

void poll() {
  if (tx_ring.empty() || !uart_ready()) return;
  for (unsigned i = 0; i < fifo_depth && !tx_ring.empty(); ++i) io::out8(data, uint8_t(tx_ring.pop()));
}

void flush() {
  while (!tx_ring.empty()) poll();
}

bool pending() { return !tx_ring.empty(); }
}  // namespace serial
