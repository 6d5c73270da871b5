#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "arch/x86/boot/acpi_tables.h"

using namespace boot;
using namespace boot::acpi;

namespace {

// Physical memory 0..1 MiB as a buffer; tables go where QEMU's SeaBIOS puts them (RSDP in the
// BIOS area, the rest below).
struct FakeMemory {
  std::vector<uint8_t> bytes = std::vector<uint8_t>(0x100000, 0);

  static const void* map(void* context, uint64_t physical, uint64_t size) {
    auto* self = static_cast<FakeMemory*>(context);
    if (physical > self->bytes.size() || size > self->bytes.size() - physical) return nullptr;
    return self->bytes.data() + physical;
  }
  PhysicalMemoryView view() { return PhysicalMemoryView{&FakeMemory::map, this}; }

  void put(uint64_t at, uint64_t value, unsigned width) {
    for (unsigned i = 0; i < width; ++i) bytes[at + i] = uint8_t(value >> (8 * i));
  }
  void put_bytes(uint64_t at, const std::vector<uint8_t>& data) { std::memcpy(&bytes[at], data.data(), data.size()); }
  // Sets the byte at `checksum_at` so that [at, at + length) sums to zero.
  void fix_checksum(uint64_t at, uint64_t length, uint64_t checksum_at) {
    bytes[checksum_at] = 0;
    uint8_t sum = 0;
    for (uint64_t i = 0; i < length; ++i) sum = uint8_t(sum + bytes[at + i]);
    bytes[checksum_at] = uint8_t(-sum);
  }
};

constexpr uint64_t rsdp_at = 0xf5a40, rsdt_at = 0x70000, xsdt_at = 0x70400, madt_at = 0x71000, other_at = 0x72000;

// A system description table header (36 bytes) of `length`.
std::vector<uint8_t> header(const char* signature, uint32_t length) {
  std::vector<uint8_t> table(36, 0);
  std::memcpy(table.data(), signature, 4);
  for (int i = 0; i < 4; ++i) table[4 + i] = uint8_t(length >> (8 * i));
  table[8] = 1;
  return table;
}

void checksum_table(std::vector<uint8_t>& table) {
  table[9] = 0;
  uint8_t sum = 0;
  for (uint8_t b : table) sum = uint8_t(sum + b);
  table[9] = uint8_t(-sum);
}

struct Entry {
  uint8_t type;
  std::vector<uint8_t> bytes;  // after type and length
};
Entry local_apic(uint8_t processor, uint8_t apic_id, uint32_t flags) {
  return {0, {processor, apic_id, uint8_t(flags), uint8_t(flags >> 8), uint8_t(flags >> 16), uint8_t(flags >> 24)}};
}
Entry io_apic() { return {1, std::vector<uint8_t>(10, 0)}; }
Entry x2apic(uint32_t id, uint32_t flags) {
  std::vector<uint8_t> b(14, 0);
  for (int i = 0; i < 4; ++i) b[2 + i] = uint8_t(id >> (8 * i)), b[6 + i] = uint8_t(flags >> (8 * i));
  return {9, b};
}

std::vector<uint8_t> madt(const std::vector<Entry>& entries) {
  std::vector<uint8_t> table = header("APIC", 0);
  table.resize(44, 0);
  table[36] = 0x00, table[37] = 0x00, table[38] = 0xe0, table[39] = 0xfe;  // 0xfee00000
  for (const Entry& e : entries) {
    table.push_back(e.type);
    table.push_back(uint8_t(e.bytes.size() + 2));
    table.insert(table.end(), e.bytes.begin(), e.bytes.end());
  }
  uint32_t length = uint32_t(table.size());
  for (int i = 0; i < 4; ++i) table[4 + i] = uint8_t(length >> (8 * i));
  checksum_table(table);
  return table;
}

ByteSpan span(const std::vector<uint8_t>& bytes) { return ByteSpan(bytes.data(), bytes.size()); }

// QEMU's layout: RSDP revision 0 -> RSDT -> (FACP-like table, MADT).
FakeMemory firmware(const std::vector<uint8_t>& madt_table, uint8_t revision = 0) {
  FakeMemory memory;
  memory.put_bytes(madt_at, madt_table);
  std::vector<uint8_t> other = header("FACP", 36);
  checksum_table(other);
  memory.put_bytes(other_at, other);
  std::vector<uint8_t> rsdt = header("RSDT", 36 + 8);
  rsdt.resize(44);
  for (int i = 0; i < 4; ++i) rsdt[36 + i] = uint8_t(other_at >> (8 * i)), rsdt[40 + i] = uint8_t(madt_at >> (8 * i));
  checksum_table(rsdt);
  memory.put_bytes(rsdt_at, rsdt);
  std::memcpy(&memory.bytes[rsdp_at], "RSD PTR ", 8);
  memory.put(rsdp_at + 15, revision, 1);
  memory.put(rsdp_at + 16, rsdt_at, 4);
  if (revision >= 2) {
    std::vector<uint8_t> xsdt = header("XSDT", 36 + 16);
    xsdt.resize(52);
    for (int i = 0; i < 8; ++i)
      xsdt[36 + i] = uint8_t(uint64_t(other_at) >> (8 * i)), xsdt[44 + i] = uint8_t(uint64_t(madt_at) >> (8 * i));
    checksum_table(xsdt);
    memory.put_bytes(xsdt_at, xsdt);
    memory.put(rsdp_at + 20, 36, 4);
    memory.put(rsdp_at + 24, xsdt_at, 8);
  }
  memory.fix_checksum(rsdp_at, 20, rsdp_at + 8);
  if (revision >= 2) memory.fix_checksum(rsdp_at, 36, rsdp_at + 32);  // covers the first one too
  return memory;
}

std::vector<Entry> cpus(unsigned n) {
  std::vector<Entry> entries;
  for (unsigned i = 0; i < n; ++i) entries.push_back(local_apic(uint8_t(i), uint8_t(i), 1));
  entries.push_back(io_apic());
  return entries;
}

TEST(AcpiTables, FindsFourCpusThroughTheRsdt) {
  FakeMemory memory = firmware(madt(cpus(4)));
  CpuList list;
  ASSERT_EQ(discover_cpus(memory.view(), 0, list), AcpiError::none);
  ASSERT_EQ(list.count, 4u);
  for (unsigned i = 0; i < 4; ++i) EXPECT_EQ(list.apic_ids[i], i);
  EXPECT_TRUE(list.boot_cpu_listed);
  EXPECT_EQ(list.disabled + list.beyond_limit + list.duplicates + list.unreachable, 0u);
}

TEST(AcpiTables, FindsCpusThroughTheXsdtFromRevisionTwo) {
  FakeMemory memory = firmware(madt(cpus(2)), 2);
  Rsdp rsdp;
  ASSERT_EQ(locate_rsdp(memory.view(), rsdp), AcpiError::none);
  EXPECT_EQ(rsdp.xsdt, xsdt_at);
  memory.bytes[rsdt_at] = 'X';  // the RSDT is not used when an XSDT exists
  CpuList list;
  ASSERT_EQ(discover_cpus(memory.view(), 0, list), AcpiError::none);
  EXPECT_EQ(list.count, 2u);
}

TEST(AcpiTables, FindsTheRsdpInTheEbdaFirst) {
  FakeMemory memory = firmware(madt(cpus(2)));
  constexpr uint64_t ebda = 0x9fc00;
  memory.put(0x40e, ebda >> 4, 2);
  std::memcpy(&memory.bytes[ebda + 0x30], &memory.bytes[rsdp_at], 20);
  std::memset(&memory.bytes[rsdp_at], 0, 20);
  Rsdp rsdp;
  EXPECT_EQ(locate_rsdp(memory.view(), rsdp), AcpiError::none);
  EXPECT_EQ(rsdp.rsdt, rsdt_at);
}

TEST(AcpiTables, BootCpuComesFirstWhateverItsId) {
  FakeMemory memory = firmware(madt(cpus(4)));
  CpuList list;
  ASSERT_EQ(discover_cpus(memory.view(), 2, list), AcpiError::none);
  ASSERT_EQ(list.count, 4u);
  EXPECT_EQ(list.apic_ids[0], 2u);
  EXPECT_EQ(list.apic_ids[1], 0u);
  EXPECT_EQ(list.apic_ids[2], 1u);
  EXPECT_EQ(list.apic_ids[3], 3u);
}

TEST(AcpiTables, BootCpuMissingFromTheTableIsStillTheFirst) {
  FakeMemory memory = firmware(madt({local_apic(0, 1, 1), local_apic(1, 2, 1)}));
  CpuList list;
  ASSERT_EQ(discover_cpus(memory.view(), 0, list), AcpiError::none);
  EXPECT_FALSE(list.boot_cpu_listed);
  ASSERT_EQ(list.count, 3u);
  EXPECT_EQ(list.apic_ids[0], 0u);
}

TEST(AcpiTables, DisabledEntriesAreCountedNotStarted) {
  FakeMemory memory = firmware(
      madt({local_apic(0, 0, 1), local_apic(1, 1, 0), local_apic(2, 2, 2 /* online capable */), local_apic(3, 3, 1)}));
  CpuList list;
  ASSERT_EQ(discover_cpus(memory.view(), 0, list), AcpiError::none);
  EXPECT_EQ(list.count, 2u);
  EXPECT_EQ(list.apic_ids[1], 3u);
  EXPECT_EQ(list.disabled, 2u);
}

TEST(AcpiTables, MoreCpusThanTheMaximumAreIgnoredAndCounted) {
  FakeMemory memory = firmware(madt(cpus(MAX_CPUS + 5)));
  CpuList list;
  ASSERT_EQ(discover_cpus(memory.view(), 0, list), AcpiError::none);
  EXPECT_EQ(list.count, unsigned(MAX_CPUS));
  EXPECT_EQ(list.beyond_limit, 5u);
  for (unsigned i = 0; i < MAX_CPUS; ++i) EXPECT_EQ(list.apic_ids[i], i);
}

TEST(AcpiTables, DuplicateApicIdsAreIgnoredAndCounted) {
  FakeMemory memory = firmware(
      madt({local_apic(0, 0, 1), local_apic(1, 1, 1), local_apic(2, 1, 1), local_apic(3, 0, 1), local_apic(4, 5, 1)}));
  CpuList list;
  ASSERT_EQ(discover_cpus(memory.view(), 0, list), AcpiError::none);
  ASSERT_EQ(list.count, 3u);
  EXPECT_EQ(list.apic_ids[1], 1u);
  EXPECT_EQ(list.apic_ids[2], 5u);
  EXPECT_EQ(list.duplicates, 2u);
}

TEST(AcpiTables, X2apicEntriesCountAndUnaddressableIdsAreSkipped) {
  FakeMemory memory = firmware(madt({local_apic(0, 0, 1), x2apic(7, 1), x2apic(300, 1), local_apic(1, 0xff, 1)}));
  CpuList list;
  ASSERT_EQ(discover_cpus(memory.view(), 0, list), AcpiError::none);
  ASSERT_EQ(list.count, 2u);
  EXPECT_EQ(list.apic_ids[1], 7u);
  EXPECT_EQ(list.unreachable, 2u);
}

TEST(AcpiTables, BadRsdpChecksumIsNotFound) {
  FakeMemory memory = firmware(madt(cpus(4)));
  memory.bytes[rsdp_at + 16] ^= 1;
  CpuList list;
  EXPECT_EQ(discover_cpus(memory.view(), 0, list), AcpiError::rsdp_not_found);
  EXPECT_EQ(list.count, 1u);
}

TEST(AcpiTables, BadExtendedRsdpChecksumIsNotFound) {
  FakeMemory memory = firmware(madt(cpus(4)), 2);
  memory.bytes[rsdp_at + 24] ^= 1;  // in the extended part only
  Rsdp rsdp;
  EXPECT_EQ(locate_rsdp(memory.view(), rsdp), AcpiError::rsdp_not_found);
}

TEST(AcpiTables, BadRootTableChecksum) {
  FakeMemory memory = firmware(madt(cpus(4)));
  memory.bytes[rsdt_at + 40] ^= 1;
  CpuList list;
  EXPECT_EQ(discover_cpus(memory.view(), 0, list), AcpiError::root_table_bad);
  EXPECT_EQ(list.count, 1u);
}

TEST(AcpiTables, RootTableLongerThanMemoryIsUnreadable) {
  FakeMemory memory = firmware(madt(cpus(4)));
  memory.put(rsdt_at + 4, 0xffffff00u, 4);
  CpuList list;
  EXPECT_EQ(discover_cpus(memory.view(), 0, list), AcpiError::root_table_unreadable);
  memory.put(rsdt_at + 4, 0x90001, 4);  // below the limit, but one byte past the end of memory
  EXPECT_EQ(discover_cpus(memory.view(), 0, list), AcpiError::root_table_unreadable);
  memory.put(rsdt_at + 4, 10, 4);  // shorter than its own header
  EXPECT_EQ(discover_cpus(memory.view(), 0, list), AcpiError::root_table_bad);
}

TEST(AcpiTables, RootTablePointingNowhereHasNoMadt) {
  FakeMemory memory = firmware(madt(cpus(4)));
  memory.put(rsdt_at + 40, 0xfffff000u, 4);  // outside memory
  memory.fix_checksum(rsdt_at, 44, rsdt_at + 9);
  CpuList list;
  EXPECT_EQ(discover_cpus(memory.view(), 0, list), AcpiError::madt_not_found);
}

TEST(AcpiTables, BadMadtChecksum) {
  std::vector<uint8_t> table = madt(cpus(4));
  table[50] ^= 0x10;
  CpuList list;
  EXPECT_EQ(parse_madt(span(table), 0, list), AcpiError::madt_bad);
  EXPECT_EQ(list.count, 1u);
  EXPECT_EQ(list.apic_ids[0], 0u);
}

TEST(AcpiTables, TruncatedMadtIsRefused) {
  std::vector<uint8_t> table = madt(cpus(4));
  CpuList list;
  // Its header says longer than the bytes given.
  EXPECT_EQ(parse_madt(ByteSpan(table.data(), table.size() - 1), 0, list), AcpiError::madt_unreadable);
  EXPECT_EQ(parse_madt(ByteSpan(table.data(), 40), 0, list), AcpiError::madt_bad);
  EXPECT_EQ(parse_madt(ByteSpan(table.data(), 3), 0, list), AcpiError::madt_bad);
  EXPECT_EQ(parse_madt(ByteSpan(), 0, list), AcpiError::madt_bad);
  EXPECT_EQ(list.count, 1u);
}

TEST(AcpiTables, OverlongMadtLengthIsRefused) {
  FakeMemory memory = firmware(madt(cpus(4)));
  memory.put(madt_at + 4, 0x80000000u, 4);
  CpuList list;
  EXPECT_EQ(discover_cpus(memory.view(), 0, list), AcpiError::madt_unreadable);
  memory.put(madt_at + 4, 0xf0000, 4);  // past the end of memory
  EXPECT_EQ(discover_cpus(memory.view(), 0, list), AcpiError::madt_unreadable);
  EXPECT_EQ(list.count, 1u);
}

TEST(AcpiTables, MadtBytesBeyondItsLengthAreNotRead) {
  std::vector<uint8_t> table = madt(cpus(2));
  std::vector<uint8_t> longer = table;
  longer.push_back(0);
  longer.push_back(8);  // an entry beyond the table's length, never parsed
  CpuList list;
  ASSERT_EQ(parse_madt(span(longer), 0, list), AcpiError::none);
  EXPECT_EQ(list.count, 2u);
}

std::vector<uint8_t> madt_with_raw_tail(const std::vector<uint8_t>& tail) {
  std::vector<uint8_t> table = madt(cpus(2));
  table.insert(table.end(), tail.begin(), tail.end());
  uint32_t length = uint32_t(table.size());
  for (int i = 0; i < 4; ++i) table[4 + i] = uint8_t(length >> (8 * i));
  checksum_table(table);
  return table;
}

TEST(AcpiTables, EntryOfLengthZeroIsMalformed) {
  CpuList list;
  EXPECT_EQ(parse_madt(span(madt_with_raw_tail({0, 0, 0, 5, 1, 0, 0, 0})), 0, list), AcpiError::madt_entry_malformed);
  EXPECT_EQ(list.count, 1u);
  EXPECT_EQ(parse_madt(span(madt_with_raw_tail({0, 1, 0, 5, 1, 0, 0, 0})), 0, list), AcpiError::madt_entry_malformed);
}

TEST(AcpiTables, EntryRunningPastTheTableIsMalformed) {
  CpuList list;
  EXPECT_EQ(parse_madt(span(madt_with_raw_tail({0, 8, 0, 5})), 0, list), AcpiError::madt_entry_malformed);
  EXPECT_EQ(parse_madt(span(madt_with_raw_tail({0})), 0, list), AcpiError::madt_entry_malformed);  // half a header
  EXPECT_EQ(list.count, 1u);
}

TEST(AcpiTables, LocalApicEntryTooShortForItsTypeIsMalformed) {
  CpuList list;
  EXPECT_EQ(parse_madt(span(madt_with_raw_tail({0, 4, 0, 5})), 0, list), AcpiError::madt_entry_malformed);
  EXPECT_EQ(parse_madt(span(madt_with_raw_tail({9, 8, 0, 0, 5, 0, 0, 0})), 0, list), AcpiError::madt_entry_malformed);
}

TEST(AcpiTables, UnknownEntryTypesAreSkippedByTheirLength) {
  CpuList list;
  ASSERT_EQ(parse_madt(span(madt_with_raw_tail({0x7f, 3, 0xaa, 0, 8, 0, 9, 1, 0, 0, 0})), 0, list), AcpiError::none);
  ASSERT_EQ(list.count, 3u);
  EXPECT_EQ(list.apic_ids[2], 9u);
}

TEST(AcpiTables, NoRsdpAtAll) {
  FakeMemory memory;
  CpuList list;
  EXPECT_EQ(discover_cpus(memory.view(), 3, list), AcpiError::rsdp_not_found);
  ASSERT_EQ(list.count, 1u);
  EXPECT_EQ(list.apic_ids[0], 3u);
}

TEST(AcpiTables, UnmappableMemoryFindsNothing) {
  PhysicalMemoryView nothing;
  CpuList list;
  EXPECT_EQ(discover_cpus(nothing, 0, list), AcpiError::rsdp_not_found);
}

TEST(AcpiTables, RsdpAtTheVeryEndOfTheScannedArea) {
  std::vector<uint8_t> area(64, 0);
  std::memcpy(&area[48], "RSD PTR ", 8);
  uint8_t sum = 0;
  for (int i = 48; i < 64; ++i) sum = uint8_t(sum + area[i]);
  // 16 bytes left: too short for the 20-byte structure, never read past the span.
  uint64_t offset = 0;
  EXPECT_FALSE(find_rsdp_in(span(area), offset));
  (void)sum;
}

TEST(AcpiTables, DescribesEveryError) {
  for (auto e :
       {AcpiError::none, AcpiError::rsdp_not_found, AcpiError::root_table_unreadable, AcpiError::root_table_bad,
        AcpiError::madt_not_found, AcpiError::madt_unreadable, AcpiError::madt_bad, AcpiError::madt_entry_malformed})
    EXPECT_STRNE(describe(e), "unknown ACPI error");
}

}  // namespace
