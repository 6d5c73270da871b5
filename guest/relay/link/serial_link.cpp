#include "relay/link/serial_link.h"

#include <xen/xen.h>
#include <xen/physdev.h>

#include "arch/hypercall.h"
#include "arch/io_port.h"
#include "relay/link/relay_window.h"
#include "common/stream/stream_frame.h"

namespace kernel::serial_link {
namespace {
namespace frame = ::trace::stream_frame;

constexpr uint16_t kCom2 = 0x2f8;
constexpr uint16_t kInterruptId = kCom2 + 2, kLineStatus = kCom2 + 5;
constexpr uint8_t kDataReady = 0x01, kTransmitterEmpty = 0x20;
// With the receive interrupt enabled (never delivered: nothing binds the UART's IRQ), the
// interrupt identification says when the FIFO holds at least its trigger level of 14 bytes:
// those are read with one rep insb, two trapped instructions where a byte at a time took 28.
constexpr uint8_t kInterruptIdMask = 0x0f, kReceivedDataAvailable = 0x04;
constexpr size_t kReceiveTrigger = 14;
// Once the transmitter is empty (LSR.THRE) the 16550's FIFO takes 16 bytes: one rep outsb
// per 16 bytes, two trapped instructions where a byte at a time took 32.
constexpr size_t kTransmitFifo = 16;

bool opened = false;
Path path = Path::serial;

void uart_init() {
  arch::out8(kCom2 + 1, 0);
  arch::out8(kCom2 + 3, 0x80);  // divisor latch: 115200 baud
  arch::out8(kCom2 + 0, 1);
  arch::out8(kCom2 + 1, 0);
  arch::out8(kCom2 + 3, 0x03);  // 8n1
  arch::out8(kCom2 + 2, 0xc7);  // FIFOs on and cleared, receive trigger at 14 bytes
  arch::out8(kCom2 + 1, 0x01);  // "received data available" shows in the IIR (the kernel polls)
}

void send_bytes(const uint8_t* data, size_t length) {
  while (length > 0) {
    while (!(arch::in8(kLineStatus) & kTransmitterEmpty)) {
    }
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

void set_path(Path to) { path = to; }

void send_frame(uint8_t type, uint16_t channel, const uint8_t* payload, uint32_t length) {
  uint8_t header[frame::kHeaderBytes];
  frame::encode_header(header, type, channel, payload, length);
  if (path == Path::window) {
    relay_window::send(header, sizeof(header));
    relay_window::send(payload, length);
    return;
  }
  send_bytes(header, sizeof(header));
  send_bytes(payload, length);
}

size_t receive(uint8_t* out, size_t capacity) {
  size_t n = 0;
  while (n < capacity) {
    if (capacity - n >= kReceiveTrigger && (arch::in8(kInterruptId) & kInterruptIdMask) == kReceivedDataAvailable) {
      uint8_t* to = out + n;
      size_t left = kReceiveTrigger;
      asm volatile("rep insb" : "+D"(to), "+c"(left) : "d"(kCom2) : "memory");
      n += kReceiveTrigger;
      continue;
    }
    if (!(arch::in8(kLineStatus) & kDataReady)) break;
    out[n++] = arch::in8(kCom2);
  }
  return n;
}

}  // namespace kernel::serial_link
