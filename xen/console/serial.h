// COM1, a 16550 UART: the hypervisor console's line. Output goes through a transmit ring
// (console/serial_transmitter, 16 KiB as Xen's serial_tx_buffer) so that no writer waits for
// the line: a byte goes straight to the UART only when nothing waits before it and the UART is
// ready; otherwise it waits in the ring, and poll() feeds the UART at most a FIFO's worth (16
// bytes) per pass, from the timer interrupt (armed every 1 ms while bytes wait), the idle loop
// and every write. At 115200 baud a byte takes 87 us on the wire: 2 KiB written synchronously
// held the CPU for 180 ms. flush() empties the ring synchronously, for the machine's end and a
// panic, so that nothing printed is lost.
#pragma once
#include <stddef.h>
#include <stdint.h>

namespace serial {
void init();
// The hypervisor's own output: never dropped; if the ring is full it waits for the UART to take
// a byte ('\n' is sent as "\r\n").
void put(char c);
// Whether `bytes` more (as put counts them: a '\n' is two) fit in the ring without waiting.
bool has_room(size_t bytes);
void poll();
void flush();
bool pending();  // bytes wait in the ring
// How often poll() must run while bytes wait: a 16-byte FIFO empties in 1.4 ms at 115200 baud.
constexpr uint64_t poll_interval_ns = 1000000;
}  // namespace serial
