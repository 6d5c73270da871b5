#include "arch/x86/boot/acpi_tables.h"

namespace boot::acpi {

const char* describe(AcpiError error) {
  switch (error) {
    case AcpiError::none: return "no error";
    case AcpiError::rsdp_not_found: return "no ACPI RSDP found";
    case AcpiError::root_table_unreadable: return "ACPI RSDT/XSDT unreadable";
    case AcpiError::root_table_bad: return "ACPI RSDT/XSDT malformed or bad checksum";
    case AcpiError::madt_not_found: return "no ACPI MADT";
    case AcpiError::madt_unreadable: return "ACPI MADT unreadable";
    case AcpiError::madt_bad: return "ACPI MADT malformed or bad checksum";
    case AcpiError::madt_entry_malformed: return "ACPI MADT entry of length 0 or past the table";
  }
  return "unknown ACPI error";
}

namespace {
// ACPI 6.x, 5.2.5 (RSDP), 5.2.6 (system description table header), 5.2.12 (MADT).
namespace rsdp {
constexpr uint64_t revision = 15, rsdt = 16, length = 20, xsdt = 24;
constexpr uint64_t v1_bytes = 20, v2_bytes = 36;
}  // namespace rsdp
constexpr uint64_t header_bytes = 36, header_length = 4;
constexpr uint64_t madt_entries = 44;  // header, local APIC address, flags
constexpr uint8_t entry_local_apic = 0, entry_local_x2apic = 9;
constexpr uint32_t enabled = 1;
constexpr uint32_t xapic_broadcast = 0xff;

bool signature_is(ByteSpan bytes, const char* text, uint64_t length) {
  if (!bytes.contains(0, length)) return false;
  for (uint64_t i = 0; i < length; ++i)
    if (bytes.u8(i) != uint8_t(text[i])) return false;
  return true;
}

bool sums_to_zero(ByteSpan bytes) {
  uint8_t sum = 0;
  for (uint64_t i = 0; i < bytes.size(); ++i) sum = uint8_t(sum + bytes.u8(i));
  return sum == 0;
}

// A system description table at `address` with signature `signature`: its header read first,
// then the whole of its stated length, checked.
enum class TableResult { ok, unreadable, bad };
TableResult read_table(const PhysicalMemoryView& memory, uint64_t address, const char* signature, ByteSpan& out) {
  ByteSpan header = memory.bytes(address, header_bytes);
  if (header.empty()) return TableResult::unreadable;
  if (!signature_is(header, signature, 4)) return TableResult::bad;
  uint32_t length = header.u32(header_length);
  if (length < header_bytes) return TableResult::bad;
  if (length > max_table_bytes) return TableResult::unreadable;
  ByteSpan table = memory.bytes(address, length);
  if (table.empty()) return TableResult::unreadable;
  if (!sums_to_zero(table)) return TableResult::bad;
  out = table;
  return TableResult::ok;
}

void add_cpu(CpuList& out, uint32_t apic_id, uint32_t flags, uint32_t boot_apic_id) {
  if (!(flags & enabled)) {
    ++out.disabled;
    return;
  }
  if (apic_id == boot_apic_id) {
    if (out.boot_cpu_listed) ++out.duplicates;
    out.boot_cpu_listed = true;
    return;
  }
  if (apic_id >= xapic_broadcast) {
    ++out.unreachable;
    return;
  }
  for (unsigned i = 0; i < out.count; ++i)
    if (out.apic_ids[i] == apic_id) {
      ++out.duplicates;
      return;
    }
  if (out.count == MAX_CPUS) {
    ++out.beyond_limit;
    return;
  }
  out.apic_ids[out.count++] = apic_id;
}

void boot_cpu_alone(CpuList& out, uint32_t boot_apic_id) {
  out = CpuList{};
  out.apic_ids[0] = boot_apic_id;
  out.count = 1;
}
}  // namespace

bool read_rsdp(ByteSpan bytes, Rsdp& out) {
  if (!signature_is(bytes, "RSD PTR ", 8) || !bytes.contains(0, rsdp::v1_bytes)) return false;
  if (!sums_to_zero(bytes.sub(0, rsdp::v1_bytes))) return false;
  Rsdp found;
  found.revision = bytes.u8(rsdp::revision);
  found.rsdt = bytes.u32(rsdp::rsdt);
  if (found.revision >= 2) {
    if (!bytes.contains(0, rsdp::v2_bytes)) return false;
    uint32_t length = bytes.u32(rsdp::length);
    if (length < rsdp::v2_bytes || !bytes.contains(0, length) || !sums_to_zero(bytes.sub(0, length))) return false;
    found.xsdt = bytes.u64(rsdp::xsdt);
  }
  out = found;
  return true;
}

bool find_rsdp_in(ByteSpan area, uint64_t& offset) {
  Rsdp ignored;
  for (uint64_t at = 0; area.contains(at, rsdp::v1_bytes); at += 16)
    if (read_rsdp(area.sub(at, area.size() - at), ignored)) {
      offset = at;
      return true;
    }
  return false;
}

AcpiError locate_rsdp(const PhysicalMemoryView& memory, Rsdp& out) {
  constexpr uint64_t bda_ebda_segment = 0x40e, ebda_scan = 1024, bios_start = 0xe0000, bios_bytes = 0x20000;
  uint64_t segment = 0;
  ByteSpan bda = memory.bytes(bda_ebda_segment, 2);
  uint64_t offset = 0;
  if (bda.read_le(0, 2, segment) && segment) {
    ByteSpan ebda = memory.bytes(segment << 4, ebda_scan);
    if (find_rsdp_in(ebda, offset) && read_rsdp(ebda.sub(offset, ebda.size() - offset), out)) return AcpiError::none;
  }
  ByteSpan bios = memory.bytes(bios_start, bios_bytes);
  if (find_rsdp_in(bios, offset) && read_rsdp(bios.sub(offset, bios.size() - offset), out)) return AcpiError::none;
  return AcpiError::rsdp_not_found;
}

AcpiError find_madt(const PhysicalMemoryView& memory, const Rsdp& rsdp, uint64_t& address, uint32_t& length) {
  bool extended = rsdp.xsdt != 0;
  ByteSpan root;
  switch (read_table(memory, extended ? rsdp.xsdt : rsdp.rsdt, extended ? "XSDT" : "RSDT", root)) {
    case TableResult::ok: break;
    case TableResult::unreadable: return AcpiError::root_table_unreadable;
    case TableResult::bad: return AcpiError::root_table_bad;
  }
  unsigned width = extended ? 8 : 4;
  for (uint64_t at = header_bytes; root.contains(at, width); at += width) {
    uint64_t table = 0;
    root.read_le(at, width, table);
    ByteSpan header = memory.bytes(table, header_bytes);
    if (header.empty() || !signature_is(header, "APIC", 4)) continue;
    address = table;
    length = header.u32(header_length);
    return AcpiError::none;
  }
  return AcpiError::madt_not_found;
}

AcpiError parse_madt(ByteSpan madt, uint32_t boot_apic_id, CpuList& out) {
  boot_cpu_alone(out, boot_apic_id);
  if (!signature_is(madt, "APIC", 4) || !madt.contains(0, madt_entries)) return AcpiError::madt_bad;
  uint32_t length = madt.u32(header_length);
  if (length < madt_entries) return AcpiError::madt_bad;
  if (!madt.contains(0, length)) return AcpiError::madt_unreadable;  // truncated: said longer than given
  ByteSpan table = madt.sub(0, length);
  if (!sums_to_zero(table)) return AcpiError::madt_bad;
  CpuList found;
  found.apic_ids[0] = boot_apic_id;
  found.count = 1;
  for (uint64_t at = madt_entries; at < length;) {
    if (!table.contains(at, 2)) return AcpiError::madt_entry_malformed;
    uint8_t type = table.u8(at), entry_length = table.u8(at + 1);
    if (entry_length < 2 || !table.contains(at, entry_length)) return AcpiError::madt_entry_malformed;
    if (type == entry_local_apic) {
      if (entry_length < 8) return AcpiError::madt_entry_malformed;
      add_cpu(found, table.u8(at + 3), table.u32(at + 4), boot_apic_id);
    } else if (type == entry_local_x2apic) {
      if (entry_length < 16) return AcpiError::madt_entry_malformed;
      add_cpu(found, table.u32(at + 4), table.u32(at + 8), boot_apic_id);
    }
    at += entry_length;
  }
  out = found;
  return AcpiError::none;
}

AcpiError discover_cpus(const PhysicalMemoryView& memory, uint32_t boot_apic_id, CpuList& out) {
  boot_cpu_alone(out, boot_apic_id);
  Rsdp rsdp;
  if (AcpiError error = locate_rsdp(memory, rsdp); error != AcpiError::none) return error;
  uint64_t address = 0;
  uint32_t length = 0;
  if (AcpiError error = find_madt(memory, rsdp, address, length); error != AcpiError::none) return error;
  if (length > max_table_bytes) return AcpiError::madt_unreadable;
  ByteSpan madt = memory.bytes(address, length);
  if (madt.empty()) return AcpiError::madt_unreadable;
  return parse_madt(madt, boot_apic_id, out);
}

}  // namespace boot::acpi
