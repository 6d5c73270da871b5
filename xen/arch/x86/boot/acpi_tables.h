#pragma once
// The firmware's list of CPUs: the ACPI RSDP (in the EBDA's first KiB or the BIOS area
// 0xE0000-0xFFFFF), the RSDT or XSDT it points to, and the MADT's local APIC entries. Every
// byte is the firmware's, read through a PhysicalMemoryView (the hypervisor's direct map, the
// tests a buffer), bounds-checked and checksummed: a bad table leaves the boot CPU alone, it
// never indexes anything it has not checked. Pure: no hardware access.

#include <stddef.h>
#include <stdint.h>

#include "arch/x86/boot/multiboot_info.h"
#include "arch/x86/layout.h"
#include "common/byte_span.h"

namespace boot::acpi {

enum class AcpiError : uint8_t {
  none,
  rsdp_not_found,         // no "RSD PTR " with a valid checksum where the firmware puts it
  root_table_unreadable,  // the RSDT/XSDT address or length cannot be mapped
  root_table_bad,         // wrong signature, length below its header, bad checksum
  madt_not_found,         // no "APIC" table in the root table
  madt_unreadable,        // its length cannot be mapped, or is beyond what the tables may be
  madt_bad,               // wrong signature, length below its header, bad checksum
  madt_entry_malformed,   // an entry of length 0 or 1, or running past the table
};
const char* describe(AcpiError error);

// Tables longer than this are refused (a length field of 4 GiB would map the world).
constexpr uint32_t max_table_bytes = 1u << 20;

struct Rsdp {
  uint8_t revision = 0;
  uint32_t rsdt = 0;
  uint64_t xsdt = 0;  // 0 when revision < 2 or absent
};

// What the MADT says about the CPUs, the boot CPU first.
struct CpuList {
  uint32_t apic_ids[MAX_CPUS] = {};
  unsigned count = 0;            // apic_ids[0..count): [0] is the boot CPU's, always present
  bool boot_cpu_listed = false;  // the boot CPU's own APIC id appeared among the enabled entries
  unsigned disabled = 0;         // entries with the enabled flag clear (absent or hot-pluggable)
  unsigned beyond_limit = 0;     // enabled CPUs past MAX_CPUS: ignored
  unsigned duplicates = 0;       // enabled entries repeating an APIC id already listed: ignored
  unsigned unreachable = 0;      // x2APIC entries with an id an xAPIC cannot address (> 254)
};

// The RSDP in `area` (aligned on 16 bytes, checksum over its first 20 bytes and, from
// revision 2, over its stated length), at `offset`; false if none.
bool find_rsdp_in(ByteSpan area, uint64_t& offset);
bool read_rsdp(ByteSpan bytes, Rsdp& out);  // bytes at a candidate: signature and checksums

// The RSDP where a PC BIOS puts it: the EBDA's first KiB (its segment at 0x40E), then
// 0xE0000-0xFFFFF.
AcpiError locate_rsdp(const PhysicalMemoryView& memory, Rsdp& out);
// The MADT's physical address and length, through the XSDT if there is one, else the RSDT.
AcpiError find_madt(const PhysicalMemoryView& memory, const Rsdp& rsdp, uint64_t& address, uint32_t& length);
// The enabled local APICs of `madt` (the whole table, its header's length at most its size),
// `boot_apic_id` first. On an error `out` holds the boot CPU alone.
AcpiError parse_madt(ByteSpan madt, uint32_t boot_apic_id, CpuList& out);
// All of it: on any error, the boot CPU alone.
AcpiError discover_cpus(const PhysicalMemoryView& memory, uint32_t boot_apic_id, CpuList& out);

}  // namespace boot::acpi
