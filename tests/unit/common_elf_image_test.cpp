#include <gtest/gtest.h>

#include <set>
#include <string>

#include "common/elf/elf_image.h"
#include "boot_elf_builder.h"

using namespace boot;
using namespace boot_test;

namespace {

ElfError parse(const Bytes& bytes, ElfImage* out = nullptr) {
  ElfImage image;
  ElfError error = ElfImage::parse(ByteSpan(bytes.data(), bytes.size()), image);
  if (out) *out = image;
  return error;
}

ElfBuilder two_segment_kernel() {
  ElfBuilder builder;
  builder.entry = 0xffffffff81000000ull;
  Segment text;
  text.vaddr = 0xffffffff81000000ull;
  text.paddr = 0x1000000;
  text.data = Bytes(0x100, 0xcc);
  text.memsz = 0x2000;
  Segment data;
  data.flags = 6;
  data.vaddr = 0xffffffff81002000ull;
  data.paddr = 0x1002000;
  data.data = Bytes(0x10, 0x11);
  data.memsz = 0x3000;
  builder.segments = {text, data};
  return builder;
}

}  // namespace

TEST(BootElfImage, ParsesValidImage) {
  ElfBuilder builder = two_segment_kernel();
  Bytes bytes = builder.build();
  ElfImage image;
  ASSERT_EQ(parse(bytes, &image), ElfError::none);
  EXPECT_EQ(image.entry(), 0xffffffff81000000ull);
  EXPECT_EQ(image.program_header_count(), 2);
  EXPECT_EQ(image.physical_start(), 0x1000000u);
  EXPECT_EQ(image.physical_end(), 0x1005000u);

  std::vector<ElfSegment> loads;
  image.for_each_loadable_segment([&](const ElfSegment& s) { loads.push_back(s); });
  ASSERT_EQ(loads.size(), 2u);
  EXPECT_EQ(loads[1].virtual_address, 0xffffffff81002000ull);
  EXPECT_EQ(loads[1].memory_size, 0x3000u);
  ByteSpan data = image.file_bytes(loads[1]);
  ASSERT_EQ(data.size(), 0x10u);
  EXPECT_EQ(data.u8(0), 0x11);
}

TEST(BootElfImage, SegmentWithoutPermissionsIsNotLoadable) {
  ElfBuilder builder = two_segment_kernel();
  builder.segments[1].flags = 0;
  Bytes bytes = builder.build();
  ElfImage image;
  ASSERT_EQ(parse(bytes, &image), ElfError::none);
  EXPECT_EQ(image.physical_end(), 0x1002000u);
}

TEST(BootElfImage, RejectsNonElf) {
  EXPECT_EQ(parse(Bytes{}), ElfError::not_elf);
  EXPECT_EQ(parse(Bytes{0x7f, 'E', 'L'}), ElfError::not_elf);
  Bytes bytes = two_segment_kernel().build();
  bytes[1] = 'X';
  EXPECT_EQ(parse(bytes), ElfError::not_elf);
}

TEST(BootElfImage, RejectsTruncatedHeader) {
  Bytes bytes = two_segment_kernel().build();
  bytes.resize(40);
  EXPECT_EQ(parse(bytes), ElfError::header_truncated);
}

TEST(BootElfImage, RejectsWrongClassMachineEndianVersionType) {
  Bytes base = two_segment_kernel().build();
  Bytes bytes = base;
  bytes[4] = 1;  // ELFCLASS32
  EXPECT_EQ(parse(bytes), ElfError::not_64bit_x86_64);
  bytes = base;
  put(bytes, 18, 3, 2);  // EM_386
  EXPECT_EQ(parse(bytes), ElfError::not_64bit_x86_64);
  bytes = base;
  bytes[5] = 2;  // big endian
  EXPECT_EQ(parse(bytes), ElfError::not_little_endian);
  bytes = base;
  put(bytes, 20, 0, 4);
  EXPECT_EQ(parse(bytes), ElfError::bad_version);
  bytes = base;
  put(bytes, 16, 3, 2);  // ET_DYN
  EXPECT_EQ(parse(bytes), ElfError::not_executable);
}

TEST(BootElfImage, RejectsBadProgramHeaderTable) {
  Bytes base = two_segment_kernel().build();
  Bytes bytes = base;
  put(bytes, 54, 32, 2);
  EXPECT_EQ(parse(bytes), ElfError::bad_program_header_size);
  bytes = base;
  put(bytes, 56, 0xffff, 2);
  EXPECT_EQ(parse(bytes), ElfError::extended_numbering);
  bytes = base;
  put(bytes, 56, 1000, 2);  // oversized count
  EXPECT_EQ(parse(bytes), ElfError::program_headers_out_of_bounds);
  bytes = base;
  put(bytes, 32, bytes.size() - 10, 8);
  EXPECT_EQ(parse(bytes), ElfError::program_headers_out_of_bounds);
  bytes = base;
  put(bytes, 32, ~uint64_t(0) - 8, 8);  // offset + size wraps
  EXPECT_EQ(parse(bytes), ElfError::program_headers_out_of_bounds);
}

TEST(BootElfImage, RejectsTruncatedSegment) {
  ElfBuilder builder = two_segment_kernel();
  Bytes bytes = builder.build();
  bytes.resize(builder.segment_offsets[1] + 4);
  EXPECT_EQ(parse(bytes), ElfError::segment_out_of_bounds);
}

TEST(BootElfImage, RejectsSegmentOffsetOverflow) {
  ElfBuilder builder = two_segment_kernel();
  Bytes bytes = builder.build();
  put(bytes, builder.phdr(0) + 8, ~uint64_t(0) - 0x10, 8);
  EXPECT_EQ(parse(bytes), ElfError::segment_out_of_bounds);
}

TEST(BootElfImage, RejectsMemszBelowFilesz) {
  ElfBuilder builder = two_segment_kernel();
  Bytes bytes = builder.build();
  put(bytes, builder.phdr(0) + 40, 0x10, 8);
  EXPECT_EQ(parse(bytes), ElfError::segment_memsz_below_filesz);
}

TEST(BootElfImage, RejectsAddressWrap) {
  ElfBuilder builder = two_segment_kernel();
  Bytes bytes = builder.build();
  put(bytes, builder.phdr(1) + 24, ~uint64_t(0) - 0x100, 8);
  EXPECT_EQ(parse(bytes), ElfError::segment_address_overflow);
}

TEST(BootElfImage, RejectsOverlappingSegments) {
  ElfBuilder builder = two_segment_kernel();
  builder.segments[1].paddr = 0x1001000;  // inside the first segment's 0x2000 bytes
  EXPECT_EQ(parse(builder.build()), ElfError::segments_overlap);
}

TEST(BootElfImage, RejectsImageWithoutLoadableSegment) {
  ElfBuilder builder;
  Segment notes;
  notes.type = 4;
  notes.data = note("Xen", 6, str_desc("linux"));
  builder.segments = {notes};
  EXPECT_EQ(parse(builder.build()), ElfError::no_loadable_segment);
}

TEST(BootElfImage, RejectsNoteAreasOutOfBounds) {
  ElfBuilder builder = two_segment_kernel();
  Segment notes;
  notes.type = 4;
  notes.data = note("Xen", 6, str_desc("linux"));
  builder.segments.push_back(notes);
  Bytes bytes = builder.build();
  put(bytes, builder.phdr(2) + 32, 0x100000, 8);
  EXPECT_EQ(parse(bytes), ElfError::note_area_out_of_bounds);

  ElfBuilder with_section = two_segment_kernel();
  Section section;
  section.data = note("Xen", 6, str_desc("linux"));
  with_section.sections = {section};
  bytes = with_section.build();
  ASSERT_EQ(parse(bytes), ElfError::none);
  Bytes broken = bytes;
  put(broken, with_section.shdr(0) + 32, 0x100000, 8);
  EXPECT_EQ(parse(broken), ElfError::note_area_out_of_bounds);
  broken = bytes;
  put(broken, 60, 500, 2);
  EXPECT_EQ(parse(broken), ElfError::section_headers_out_of_bounds);
  broken = bytes;
  put(broken, 58, 40, 2);
  EXPECT_EQ(parse(broken), ElfError::bad_section_header_size);
}

TEST(BootNoteCursor, WalksNotesWithFourByteAlignment) {
  Bytes area =
      concat({note("Xen", 5, str_desc("xen-3.0")), note("GNU", 3, u32_desc(7)), note("Xen", 1, u64_desc(0x1234))});
  NoteCursor cursor(ByteSpan(area.data(), area.size()), 4);
  ElfNote n{};
  ASSERT_EQ(cursor.next(n), NoteCursor::Step::note);
  EXPECT_TRUE(n.has_name("Xen"));
  EXPECT_EQ(n.type, 5u);
  EXPECT_EQ(n.desc.size(), 8u);
  ASSERT_EQ(cursor.next(n), NoteCursor::Step::note);
  EXPECT_TRUE(n.has_name("GNU"));
  EXPECT_FALSE(n.has_name("Xen"));
  ASSERT_EQ(cursor.next(n), NoteCursor::Step::note);
  EXPECT_EQ(n.desc.u64(0), 0x1234u);
  EXPECT_EQ(cursor.next(n), NoteCursor::Step::end);
}

TEST(BootNoteCursor, HonoursEightByteAlignment) {
  // "Linux\0" ends 18 bytes into the record: with 8-byte padding the descriptor is at 24.
  Bytes area = concat({note("Linux", 1, u32_desc(1), 8), note("Xen", 2, u64_desc(9), 8)});
  NoteCursor cursor(ByteSpan(area.data(), area.size()), 8);
  ElfNote n{};
  ASSERT_EQ(cursor.next(n), NoteCursor::Step::note);
  EXPECT_TRUE(n.has_name("Linux"));
  ASSERT_EQ(cursor.next(n), NoteCursor::Step::note);
  EXPECT_TRUE(n.has_name("Xen"));
  EXPECT_EQ(n.desc.u64(0), 9u);
  EXPECT_EQ(cursor.next(n), NoteCursor::Step::end);
}

TEST(BootNoteCursor, ReportsMalformedNotes) {
  Bytes good = note("Xen", 1, u64_desc(1));
  struct Case {
    const char* what;
    size_t offset;
    uint32_t value;
  };
  for (Case c : {Case{"namesz too big", 0, 200}, Case{"descsz too big", 4, 200}, Case{"namesz huge", 0, 0xffffffffu},
                 Case{"descsz huge", 4, 0xfffffffdu}}) {
    Bytes bad = good;
    put(bad, c.offset, c.value, 4);
    NoteCursor cursor(ByteSpan(bad.data(), bad.size()), 4);
    ElfNote n{};
    EXPECT_EQ(cursor.next(n), NoteCursor::Step::malformed) << c.what;
  }
  Bytes trailing = concat({good, Bytes{1, 2, 3, 4, 5}});
  NoteCursor cursor(ByteSpan(trailing.data(), trailing.size()), 4);
  ElfNote n{};
  EXPECT_EQ(cursor.next(n), NoteCursor::Step::note);
  EXPECT_EQ(cursor.next(n), NoteCursor::Step::malformed);
}

TEST(BootElfImage, EveryErrorHasADistinctMessage) {
  std::set<std::string> messages;
  for (int e = 0; e <= int(ElfError::malformed_note); ++e) messages.insert(describe(ElfError(e)));
  EXPECT_EQ(messages.size(), size_t(ElfError::malformed_note) + 1);
  EXPECT_STREQ(describe(ElfError::not_elf), "not an ELF file");
  EXPECT_STREQ(describe(ElfError::not_64bit_x86_64), "not a 64-bit x86-64 ELF");
  EXPECT_STREQ(describe(ElfError::program_headers_out_of_bounds), "program header out of bounds");
  EXPECT_STREQ(describe(ElfError::segment_out_of_bounds), "segment out of bounds");
}

TEST(BootElfImage, SurvivesEveryTruncation) {
  ElfBuilder builder = two_segment_kernel();
  Section section;
  section.data = note("Xen", 6, str_desc("linux"));
  builder.sections = {section};
  Bytes bytes = builder.build();
  for (size_t size = 0; size < bytes.size(); ++size) {
    Bytes cut(bytes.begin(), bytes.begin() + size);
    EXPECT_NE(parse(cut), ElfError::none) << size;
  }
  EXPECT_EQ(parse(bytes), ElfError::none);
}
