#pragma once
// Where the machine's interrupt hardware answers in physical memory, as found at boot. No
// domain, dom0 included, may map what would let it program the interrupts the hypervisor
// relies on (its timer is the local APIC's): Xen's dom0_setup_permissions denies dom0 these
// frames even though it holds I/O-memory access to everything else.
#include <stdint.h>

namespace mm {

// The architectural default of IA32_APIC_BASE (0xfee00000), before any relocation.
inline constexpr uint64_t kDefaultLocalApicMfn = 0xfee00;
// Writes to 0xfee00000-0xfeefffff are MSIs, not memory: the whole 1 MiB is denied.
inline constexpr uint64_t kMsiFirstMfn = 0xfee00, kMsiLastMfn = 0xfeeff;
// The IO-APICs live in 0xfec00000-0xfecfffff on PC chipsets (the first at 0xfec00000). Without
// an MADT parser the whole window stands for them: read-only MMIO, as Xen puts each IO-APIC
// page in its mmio_ro_ranges.
inline constexpr uint64_t kIoApicFirstMfn = 0xfec00, kIoApicLastMfn = 0xfecff;
// AMD's HyperTransport window, the 12 GiB below 1 TiB (Xen: CPU families below 0x17).
inline constexpr uint64_t kHyperTransportFirstMfn = (uint64_t{1} << 28) - (uint64_t{3} << 20);
inline constexpr uint64_t kHyperTransportLastMfn = (uint64_t{1} << 28) - 1;

struct InterruptHardware {
  uint64_t local_apic_mfn = kDefaultLocalApicMfn;  // IA32_APIC_BASE >> 12, read at boot
  bool hypertransport = false;                     // an AMD (or Hygon) CPU: the HT window exists
};

}  // namespace mm
