#pragma once
// Live capture of the hypervisor's trace buffers (kernel option trace=capture), the way Xen's
// dom0 xentrace does it: enable them with XEN_SYSCTL_tbuf_op, map t_info and every CPU's
// buffer frames (hypervisor pages shared with privileged domains), and copy records out as
// the hypervisor writes them. They leave through the second serial port (COM2, with I/O
// permission from PHYSDEVOP_set_iopl) in the framed stream of trace/PROTOCOL.md, one RECORDS
// frame per CPU's window with the CPU as its channel, which build/bin/xentrace turns into a
// trace file on the host with Xen's per-CPU framing.
#include <stdint.h>

struct xen_sysctl_tbuf_op;

namespace kernel::trace_capture {
enum class Operation : uint32_t { fork = 1, exec = 2, exit = 3 };

// XEN_SYSCTL_tbuf_op `command` with `size` (set_size) or `evt_mask` (set_evt_mask); the
// hypervisor's answer in *out if given.
long tbuf_op(uint32_t command, uint32_t size, xen_sysctl_tbuf_op* out = nullptr, uint32_t evt_mask = 0);

extern bool capturing;  // read inline by poll(): long kernel loops call it per entry

void start_if_requested();  // at boot, after the direct map exists
void drain_if_filling();
// Drains when the buffer is getting full. Called at every exit from the kernel and inside
// loops that make many records; costs a load and a branch while not capturing.
inline void poll() {
  if (capturing) drain_if_filling();
}
// For a kernel that waits on the host (the relay): sends what has piled up, now and then, so a
// live reader sees records while the machine is idle rather than at a quarter full.
void drain_when_idle();
// Marks the start and end of an operation (fork, ...) so the analyser can tell one fork's
// records from the next: drains first, so the marker lands in order.
void mark(Operation operation, uint32_t id, bool begin);
void finish();  // before shutdown: last records, then END
// A new listener on the link (the relay's host opened a session): HELLO again, so the stream
// it reads from here on is one xentrace can decode by itself.
void restart_stream();
}  // namespace kernel::trace_capture
