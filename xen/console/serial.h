// COM1, a 16550 UART: the hypervisor's console.
#pragma once

namespace serial {
void init();
void put(char c);
}  // namespace serial
