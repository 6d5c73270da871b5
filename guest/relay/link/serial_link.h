#pragma once
// The link to the host on the second serial port (COM2), shared by the trace stream
// (trace=capture) and the relay (relay=com2): one UART set-up, one framing
// (common/stream/stream_frame.h, trace/PROTOCOL.md and tools/PROTOCOL.md). The kernel is single-
// threaded and sends whole frames, so the two users' frames never interleave mid-frame.
#include <stddef.h>
#include <stdint.h>

namespace kernel::serial_link {

// Asks for I/O permission (PHYSDEVOP_set_iopl) and sets the UART up, the first time: 0, or the
// hypervisor's error when it gives no permission.
long open();
// Where send_frame sends: the serial port, or the relay's bulk window (relay/link/relay_window.h)
// once a host session came through it (tools/PROTOCOL.md: dom0 sends on the path the last
// request came from, its trace frames too).
enum class Path { serial, window };
void set_path(Path path);
void send_frame(uint8_t type, uint16_t channel, const uint8_t* payload, uint32_t length);
// Whatever the UART holds now, at most `capacity` bytes; never waits.
size_t receive(uint8_t* out, size_t capacity);

}  // namespace kernel::serial_link
