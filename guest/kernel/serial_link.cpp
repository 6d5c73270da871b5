#include "kernel/serial_link.h"

#include <xen/xen.h>
#include <xen/physdev.h>

#include "arch/hypercall.h"
#include "arch/io_port.h"
#include "trace/format/stream_frame.h"

namespace kernel::serial_link {
namespace {
namespace frame = ::trace::stream_frame;

constexpr uint16_t kCom2 = 0x2f8;
constexpr uint16_t kLineStatus = kCom2 + 5;
constexpr uint8_t kDataReady = 0x01, kTransmitterEmpty = 0x20;
// Once the transmitter is empty (LSR.THRE) the 16550's FIFO takes 16 bytes: one rep outsb
// per 16 bytes, two trapped instructions where a byte at a time took 32.
constexpr size_t kTransmitFifo = 16;

bool opened = false;

void uart_init() {
  arch::out8(kCom2 + 1, 0);     // no interrupts: the kernel polls
  arch::out8(kCom2 + 3, 0x80);  // divisor latch: 115200 baud
  arch::out8(kCom2 + 0, 1);
  arch::out8(kCom2 + 1, 0);
  arch::out8(kCom2 + 3, 0x03);  // 8n1
  arch::out8(kCom2 + 2, 0xc7);  // FIFOs on and cleared
}

void send_bytes(const uint8_t* data, size_t length) {
  while (length > 0) {
    while (!(arch::in8(kLineStatus) & kTransmitterEmpty)) {}
    size_t burst = length < kTransmitFifo ? length : kTransmitFifo;
    size_t left = burst;
    asm volatile("rep outsb" : "+S"(data), "+c"(left) : "d"(kCom2) : "memory");
    length -= burst;
  }
}
}  // namespace

long open() {
  if (opened) return 0;
  physdev_set_iopl_t iopl{3};
  long rc = arch::hypercall(__HYPERVISOR_physdev_op, PHYSDEVOP_set_iopl, arch::arg(&iopl));
  if (rc < 0) return rc;
  uart_init();
  opened = true;
  return 0;
}

void send_frame(uint8_t type, uint16_t channel, const uint8_t* payload, uint32_t length) {
  uint8_t header[frame::kHeaderBytes];
  frame::encode_header(header, type, channel, payload, length);
  send_bytes(header, sizeof(header));
  send_bytes(payload, length);
}

size_t receive(uint8_t* out, size_t capacity) {
  size_t n = 0;
  while (n < capacity && (arch::in8(kLineStatus) & kDataReady)) out[n++] = arch::in8(kCom2);
  return n;
}

}  // namespace kernel::serial_link
