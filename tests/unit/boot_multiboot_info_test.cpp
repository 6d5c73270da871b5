#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "arch/x86/boot/multiboot_info.h"

using namespace boot;

namespace {

// A fake physical memory: `bytes` stands for [base, base + size).
struct FakeMemory {
  uint64_t base = 0x10000;
  std::vector<uint8_t> bytes = std::vector<uint8_t>(0x4000, 0);

  static const void* map(void* context, uint64_t physical, uint64_t size) {
    auto* self = static_cast<FakeMemory*>(context);
    if (physical < self->base || physical - self->base > self->bytes.size() ||
        size > self->bytes.size() - (physical - self->base))
      return nullptr;
    return self->bytes.data() + (physical - self->base);
  }
  PhysicalMemoryView view() { return PhysicalMemoryView{&FakeMemory::map, this}; }

  void put(uint64_t physical, uint64_t value, unsigned width) {
    for (unsigned i = 0; i < width; ++i) bytes[physical - base + i] = uint8_t(value >> (8 * i));
  }
  void put_string(uint64_t physical, const std::string& text) {
    std::memcpy(&bytes[physical - base], text.c_str(), text.size() + 1);
  }
};

constexpr uint64_t info_at = 0x10000, cmdline_at = 0x10100, mods_at = 0x10200, mod_string_at = 0x10300,
                   mmap_at = 0x10400, name_at = 0x10500;

// A structure like QEMU's: memory sizes, command line, two modules, three mmap entries.
FakeMemory qemu_like() {
  FakeMemory memory;
  memory.put(info_at + 0,
             multiboot::flag_memory | multiboot::flag_command_line | multiboot::flag_modules |
                 multiboot::flag_memory_map | multiboot::flag_loader_name,
             4);
  memory.put(info_at + 4, 639, 4);
  memory.put(info_at + 8, 523136, 4);
  memory.put(info_at + 16, cmdline_at, 4);
  memory.put_string(cmdline_at, "/xen console=com1 dom0_mem=64M");
  memory.put(info_at + 20, 2, 4);
  memory.put(info_at + 24, mods_at, 4);
  memory.put(mods_at + 0, 0x200000, 4);
  memory.put(mods_at + 4, 0x3b8000, 4);
  memory.put(mods_at + 8, mod_string_at, 4);
  memory.put(mods_at + 16, 0x3b8000, 4);
  memory.put(mods_at + 20, 0x3b8000, 4);  // an empty module is fine
  memory.put(mods_at + 24, 0, 4);
  memory.put_string(mod_string_at, "vmlinuz root=/dev/xvda");
  uint64_t at = mmap_at;
  auto entry = [&](uint64_t base, uint64_t length, uint32_t type, uint32_t size = 20) {
    memory.put(at, size, 4);
    memory.put(at + 4, base, 8);
    memory.put(at + 12, length, 8);
    memory.put(at + 20, type, 4);
    at += 4 + size;
  };
  entry(0, 0x9fc00, 1);
  entry(0xf0000, 0x10000, 2, 24);  // a larger `size` (extended attributes) must be skipped
  entry(0x100000, 0x1ff00000, 1);
  memory.put(info_at + 44, at - mmap_at, 4);
  memory.put(info_at + 48, mmap_at, 4);
  memory.put(info_at + 64, name_at, 4);
  memory.put_string(name_at, "qemu");
  return memory;
}

}  // namespace

TEST(BootMultiboot, ReadsQemuLikeInfo) {
  FakeMemory memory = qemu_like();
  MultibootInfo info;
  ASSERT_EQ(MultibootInfo::read(memory.view(), info_at, info), MultibootError::none);
  uint32_t lower = 0, upper = 0;
  ASSERT_EQ(info.memory_sizes(lower, upper), MultibootError::none);
  EXPECT_EQ(lower, 639u);
  EXPECT_EQ(upper, 523136u);

  MultibootString text;
  ASSERT_EQ(info.command_line(text), MultibootError::none);
  EXPECT_STREQ(text.text, "/xen console=com1 dom0_mem=64M");
  EXPECT_EQ(text.length, 30u);
  ASSERT_EQ(info.loader_name(text), MultibootError::none);
  EXPECT_STREQ(text.text, "qemu");

  ASSERT_EQ(info.module_count(), 2u);
  MultibootModule module;
  ASSERT_EQ(info.module(0, module), MultibootError::none);
  EXPECT_EQ(module.start, 0x200000u);
  EXPECT_EQ(module.size(), 0x1b8000u);
  ASSERT_EQ(info.module_command_line(module, text), MultibootError::none);
  EXPECT_STREQ(text.text, "vmlinuz root=/dev/xvda");
  ASSERT_EQ(info.module(1, module), MultibootError::none);
  EXPECT_EQ(module.size(), 0u);
  EXPECT_EQ(info.module_command_line(module, text), MultibootError::field_absent);
  EXPECT_EQ(info.module(2, module), MultibootError::module_index_out_of_range);

  MemoryMapEntry entries[8];
  size_t count = 0;
  ASSERT_EQ(info.collect_memory_map(entries, 8, count), MultibootError::none);
  ASSERT_EQ(count, 3u);
  EXPECT_TRUE(entries[0].is_available());
  EXPECT_EQ(entries[1].base, 0xf0000u);
  EXPECT_FALSE(entries[1].is_available());
  EXPECT_EQ(entries[2].base, 0x100000u);
  EXPECT_EQ(entries[2].end(), 0x20000000u);
  ASSERT_EQ(info.collect_memory_map(entries, 1, count), MultibootError::none);
  EXPECT_EQ(count, 3u);  // the count says how many exist even if fewer fit
}

TEST(BootMultiboot, AbsentFieldsAreReported) {
  FakeMemory memory = qemu_like();
  memory.put(info_at, 0, 4);
  MultibootInfo info;
  ASSERT_EQ(MultibootInfo::read(memory.view(), info_at, info), MultibootError::none);
  uint32_t lower, upper;
  MultibootString text;
  MemoryMapCursor cursor;
  EXPECT_EQ(info.memory_sizes(lower, upper), MultibootError::field_absent);
  EXPECT_EQ(info.command_line(text), MultibootError::field_absent);
  EXPECT_EQ(info.loader_name(text), MultibootError::field_absent);
  EXPECT_EQ(info.module_count(), 0u);
  EXPECT_EQ(info.memory_map(cursor), MultibootError::field_absent);
}

TEST(BootMultiboot, UnreadableStructuresFailCleanly) {
  FakeMemory memory = qemu_like();
  MultibootInfo info;
  EXPECT_EQ(MultibootInfo::read(memory.view(), 0x1000, info), MultibootError::info_unreadable);
  EXPECT_EQ(MultibootInfo::read(memory.view(), 0x13ff0, info), MultibootError::info_unreadable);
  EXPECT_EQ(MultibootInfo::read(PhysicalMemoryView{}, info_at, info), MultibootError::info_unreadable);

  memory.put(info_at + 16, 0x99999, 4);  // command line outside memory
  memory.put(info_at + 24, 0x13ff8, 4);  // module table runs off the end
  memory.put(info_at + 48, 0x13fe0, 4);  // memory map runs off the end
  ASSERT_EQ(MultibootInfo::read(memory.view(), info_at, info), MultibootError::none);
  MultibootString text;
  MultibootModule module;
  MemoryMapCursor cursor;
  EXPECT_EQ(info.command_line(text), MultibootError::string_unreadable);
  EXPECT_EQ(info.module(0, module), MultibootError::modules_unreadable);
  EXPECT_EQ(info.memory_map(cursor), MultibootError::memory_map_unreadable);
}

TEST(BootMultiboot, UnterminatedStringAtEndOfMemory) {
  FakeMemory memory = qemu_like();
  uint64_t end = memory.base + memory.bytes.size();
  std::memset(&memory.bytes[memory.bytes.size() - 16], 'x', 16);
  memory.put(info_at + 16, end - 16, 4);
  MultibootInfo info;
  ASSERT_EQ(MultibootInfo::read(memory.view(), info_at, info), MultibootError::none);
  MultibootString text;
  EXPECT_EQ(info.command_line(text), MultibootError::string_unreadable);
  // A string ending exactly at the last byte is fine.
  memory.bytes.back() = 0;
  ASSERT_EQ(info.command_line(text), MultibootError::none);
  EXPECT_EQ(text.length, 15u);
}

TEST(BootMultiboot, InvalidModuleRange) {
  FakeMemory memory = qemu_like();
  memory.put(mods_at + 4, 0x100000, 4);  // ends before it starts
  MultibootInfo info;
  ASSERT_EQ(MultibootInfo::read(memory.view(), info_at, info), MultibootError::none);
  MultibootModule module;
  EXPECT_EQ(info.module(0, module), MultibootError::module_range_invalid);
}

TEST(BootMultiboot, MalformedMemoryMapEntries) {
  for (uint32_t bad_size : {0u, 19u, 0x1000u}) {
    FakeMemory memory = qemu_like();
    memory.put(mmap_at + 24, bad_size, 4);  // second entry's size field
    MultibootInfo info;
    ASSERT_EQ(MultibootInfo::read(memory.view(), info_at, info), MultibootError::none);
    MemoryMapEntry entries[8];
    size_t count = 0;
    EXPECT_EQ(info.collect_memory_map(entries, 8, count), MultibootError::memory_map_entry_malformed) << bad_size;
  }
  FakeMemory memory = qemu_like();
  memory.put(info_at + 44, 24 + 2, 4);  // length cuts the second entry's size field
  MultibootInfo info;
  ASSERT_EQ(MultibootInfo::read(memory.view(), info_at, info), MultibootError::none);
  MemoryMapCursor cursor;
  ASSERT_EQ(info.memory_map(cursor), MultibootError::none);
  MemoryMapEntry entry;
  EXPECT_EQ(cursor.next(entry), MemoryMapCursor::Step::entry);
  EXPECT_EQ(cursor.next(entry), MemoryMapCursor::Step::malformed);
}

TEST(BootMultiboot, WrappingEntrySaturates) {
  MemoryMapEntry entry{0xfffffffffffff000ull, 0x2000, 1};
  EXPECT_EQ(entry.end(), ~0ull);
}
