#pragma once
// The relay's bulk window on dom0's side (tools/PROTOCOL.md "The bulk window",
// common/relay/window.h): QEMU's ivshmem-plain found on PCI bus 0, its shared-memory BAR mapped
// into the kernel (an I/O-memory mapping: the hypervisor allows dom0 frames outside RAM), the
// rings reset and the window announced to the host.
#include <stddef.h>
#include <stdint.h>

namespace kernel::relay_window {

// Finds and maps the window; true when it serves. Without the device, false (no message).
bool open();
bool available();
// Whatever the host wrote, at most `capacity` bytes; never waits.
size_t receive(uint8_t* out, size_t capacity);
// Sends all of it, waiting for room while the host reads; gives up (and drops the rest) when
// the host reads nothing for a second: it went away.
void send(const uint8_t* data, size_t length);

}  // namespace kernel::relay_window
