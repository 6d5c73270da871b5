// The user-program loader's ELF parser: accepts a static x86-64 executable and rejects
// every malformed header with a specific status, without reading out of bounds.
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "guest/kernel/process/elf.h"

namespace {

constexpr uint64_t kUserLimit = 0x0000800000000000ull;

template <typename T>
void put(std::vector<uint8_t>& file, size_t offset, T value) {
  std::memcpy(file.data() + offset, &value, sizeof(T));
}

struct Phdr {
  uint32_t type, flags;
  uint64_t offset, vaddr, filesz, memsz;
};

void put_phdr(std::vector<uint8_t>& file, size_t index, const Phdr& p) {
  size_t at = 64 + index * 56;
  put(file, at, p.type);
  put(file, at + 4, p.flags);
  put(file, at + 8, p.offset);
  put(file, at + 16, p.vaddr);
  put(file, at + 24, p.vaddr);  // paddr
  put(file, at + 32, p.filesz);
  put(file, at + 40, p.memsz);
  put(file, at + 48, uint64_t{4096});
}

// Text at 0x400000 (file offset 0, maps the headers), data at 0x401000 with .bss.
std::vector<uint8_t> valid_elf() {
  std::vector<uint8_t> file(0x2000, 0);
  const uint8_t ident[] = {0x7f, 'E', 'L', 'F', 2, 1, 1};
  std::memcpy(file.data(), ident, sizeof(ident));
  put(file, 16, uint16_t{2});   // ET_EXEC
  put(file, 18, uint16_t{62});  // EM_X86_64
  put(file, 20, uint32_t{1});
  put(file, 24, uint64_t{0x400100});  // entry
  put(file, 32, uint64_t{64});        // phoff
  put(file, 52, uint16_t{64});
  put(file, 54, uint16_t{56});
  put(file, 56, uint16_t{3});
  put_phdr(file, 0, {1, 5, 0, 0x400000, 0x1000, 0x1000});
  put_phdr(file, 1, {1, 6, 0x1000, 0x401000, 0x800, 0x3000});
  put_phdr(file, 2, {0x6474e551, 6, 0, 0, 0, 0});  // PT_GNU_STACK: ignored
  return file;
}

lib::ElfStatus parse(const std::vector<uint8_t>& file, lib::ElfImage& image) {
  return lib::elf_parse(file.data(), file.size(), kUserLimit, image);
}

}  // namespace

TEST(guest_elf, ParsesStaticExecutable) {
  lib::ElfImage image;
  ASSERT_EQ(parse(valid_elf(), image), lib::ElfStatus::ok);
  EXPECT_EQ(image.entry, 0x400100u);
  EXPECT_EQ(image.segment_count, 2u);
  EXPECT_EQ(image.program_headers_vaddr, 0x400040u);
  EXPECT_EQ(image.program_header_count, 3u);
  EXPECT_EQ(image.highest_address, 0x404000u);
  EXPECT_EQ(image.segments[1].flags, 6u);
}

TEST(guest_elf, EveryTruncationFailsCleanly) {
  std::vector<uint8_t> file = valid_elf();
  // The last byte any header or segment needs is at 0x1800 (end of the data segment).
  for (size_t length = 0; length < 0x1800; length += 7) {
    std::vector<uint8_t> cut(file.begin(), file.begin() + length);
    lib::ElfImage image;
    EXPECT_NE(parse(cut, image), lib::ElfStatus::ok) << "length " << length;
  }
}

TEST(guest_elf, RejectsBadIdentity) {
  struct Case {
    size_t offset;
    uint8_t value;
    lib::ElfStatus expected;
  } cases[] = {{0, 0, lib::ElfStatus::bad_magic},         {4, 1, lib::ElfStatus::not_64bit},
               {5, 2, lib::ElfStatus::not_little_endian}, {6, 0, lib::ElfStatus::bad_version},
               {18, 3, lib::ElfStatus::wrong_machine},    {16, 3, lib::ElfStatus::not_executable}};
  for (const Case& c : cases) {
    std::vector<uint8_t> file = valid_elf();
    file[c.offset] = c.value;
    lib::ElfImage image;
    EXPECT_EQ(parse(file, image), c.expected) << "offset " << c.offset;
  }
}

TEST(guest_elf, RejectsProgramHeaderTableOutsideFile) {
  std::vector<uint8_t> file = valid_elf();
  put(file, 32, uint64_t{0xfffffffffffffff0ull});
  lib::ElfImage image;
  EXPECT_EQ(parse(file, image), lib::ElfStatus::bad_program_headers);
  file = valid_elf();
  put(file, 54, uint16_t{32});
  EXPECT_EQ(parse(file, image), lib::ElfStatus::bad_program_headers);
  file = valid_elf();
  put(file, 56, uint16_t{0});
  EXPECT_EQ(parse(file, image), lib::ElfStatus::bad_program_headers);
}

TEST(guest_elf, RejectsSegmentBeyondFile) {
  std::vector<uint8_t> file = valid_elf();
  put_phdr(file, 1, {1, 6, 0x1000, 0x401000, 0x1001, 0x3000});
  lib::ElfImage image;
  EXPECT_EQ(parse(file, image), lib::ElfStatus::bad_segment);
}

TEST(guest_elf, RejectsFileSizeLargerThanMemorySize) {
  std::vector<uint8_t> file = valid_elf();
  put_phdr(file, 1, {1, 6, 0x1000, 0x401000, 0x800, 0x400});
  lib::ElfImage image;
  EXPECT_EQ(parse(file, image), lib::ElfStatus::bad_segment);
}

TEST(guest_elf, RejectsAddressOverflow) {
  std::vector<uint8_t> file = valid_elf();
  put_phdr(file, 1, {1, 6, 0x1000, 0xfffffffffffff000ull, 0x800, 0x2000});
  lib::ElfImage image;
  EXPECT_EQ(parse(file, image), lib::ElfStatus::bad_segment);
}

TEST(guest_elf, RejectsKernelAddresses) {
  std::vector<uint8_t> file = valid_elf();
  put_phdr(file, 1, {1, 6, 0x1000, 0xffffffff80000000ull, 0x800, 0x2000});
  lib::ElfImage image;
  EXPECT_EQ(parse(file, image), lib::ElfStatus::segment_outside_user_space);
  file = valid_elf();
  put_phdr(file, 1, {1, 6, 0x1000, 0, 0x800, 0x2000});  // page zero stays unmapped
  EXPECT_EQ(parse(file, image), lib::ElfStatus::segment_outside_user_space);
}

TEST(guest_elf, RejectsEntryOutsideExecutableSegment) {
  std::vector<uint8_t> file = valid_elf();
  put(file, 24, uint64_t{0x401010});  // in the data segment
  lib::ElfImage image;
  EXPECT_EQ(parse(file, image), lib::ElfStatus::bad_entry);
}

TEST(guest_elf, RejectsImageWithoutLoadSegments) {
  std::vector<uint8_t> file = valid_elf();
  put_phdr(file, 0, {4, 4, 0, 0, 0, 0});
  put_phdr(file, 1, {4, 4, 0, 0, 0, 0});
  lib::ElfImage image;
  EXPECT_EQ(parse(file, image), lib::ElfStatus::no_loadable_segment);
}

TEST(guest_elf, RejectsTooManySegments) {
  std::vector<uint8_t> file = valid_elf();
  put(file, 56, uint16_t{20});
  for (size_t i = 0; i < 20; ++i) put_phdr(file, i, {1, 5, 0, 0x400000 + i * 0x1000, 0x10, 0x10});
  lib::ElfImage image;
  EXPECT_EQ(parse(file, image), lib::ElfStatus::too_many_segments);
}
