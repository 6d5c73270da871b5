// The 8259 PICs. The BIOS leaves them delivering IRQ 0 (the PIT) on vector 8, which would look
// like a double fault; the local APIC replaces them, so they are remapped and fully masked.
#pragma once

namespace legacy_pic {
void disable();
}
