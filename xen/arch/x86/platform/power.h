// Ending the machine. Under QEMU the isa-debug-exit device (port 0xf4) turns the value into
// QEMU's exit status, (value << 1) | 1, which is how tests read a verdict; on a real machine
// the write is ignored and the CPU halts.
#pragma once
#include <stdint.h>

namespace power {
[[noreturn]] void off(uint8_t value);
}
