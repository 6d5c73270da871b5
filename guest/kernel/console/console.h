#pragma once
// Kernel output goes to the hypervisor console: dom0's through HYPERVISOR_console_io; a
// domU's, when its builder gave it a console (start_info->console.domU), into that ring's
// `out` half with a notification on its event channel, as Linux's hvc_xen does.
#include <stddef.h>
#include <stdint.h>

struct xencons_interface;

namespace kernel {

// After boot_info_init: a domU with a console page writes there from now on.
void console_init();
// Once the kernel's clock runs (the console stands below time): a full ring is then waited for,
// up to 2 s, yielding the CPU while its backend drains it; before, the text goes to console_io.
void console_set_clock(uint64_t (*now_ns)());
void console_write(const char* text, size_t length);
void print(const char* fmt, ...) __attribute__((format(printf, 1, 2)));

// The ring and its port when the console is a ring (null / 0 otherwise), for the selftests.
xencons_interface* console_ring();
uint32_t console_port();

}  // namespace kernel
