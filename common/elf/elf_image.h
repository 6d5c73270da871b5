#pragma once
// Bounds-checked reader of an in-memory ELF64 x86-64 executable: the dom0 kernel as the boot
// loader handed it over. Everything is validated once in ElfImage::parse, so later accessors
// can trust offsets; note contents are validated lazily by NoteCursor because Xen's notes may
// sit in any PT_NOTE segment or SHT_NOTE section and a defect in one must still be reported.

#include <stddef.h>
#include <stdint.h>

#include "common/byte_span.h"

namespace boot {

enum class ElfError : uint8_t {
  none,
  not_elf,
  not_64bit_x86_64,
  not_little_endian,
  bad_version,
  not_executable,
  header_truncated,
  bad_program_header_size,
  extended_numbering,
  program_headers_out_of_bounds,
  segment_out_of_bounds,
  segment_memsz_below_filesz,
  segment_address_overflow,
  segments_overlap,
  no_loadable_segment,
  bad_section_header_size,
  section_headers_out_of_bounds,
  note_area_out_of_bounds,
  malformed_note,
};

// A short human sentence for the console, e.g. "program header out of bounds".
const char* describe(ElfError error);

namespace elf {
constexpr uint32_t pt_load = 1;
constexpr uint32_t pt_note = 4;
constexpr uint32_t sht_note = 7;
constexpr uint32_t pf_x = 1, pf_w = 2, pf_r = 4;
constexpr uint16_t et_exec = 2;
constexpr uint16_t em_x86_64 = 62;
constexpr uint64_t header_size = 64;
constexpr uint64_t program_header_size = 56;
constexpr uint64_t section_header_size = 64;
constexpr uint64_t note_header_size = 12;
}  // namespace elf

struct ElfSegment {
  uint32_t type;
  uint32_t flags;
  uint64_t file_offset;
  uint64_t virtual_address;
  uint64_t physical_address;
  uint64_t file_size;
  uint64_t memory_size;
  uint64_t alignment;

  constexpr bool is_load() const { return type == elf::pt_load; }
  // Xen loads a PT_LOAD only if it is readable, writable or executable at all.
  constexpr bool is_loadable() const { return is_load() && (flags & (elf::pf_r | elf::pf_w | elf::pf_x)) != 0; }
};

struct ElfSection {
  uint32_t type;
  uint64_t file_offset;
  uint64_t size;
  uint64_t alignment;
};

// One note record. `name` includes its NUL terminator as the ELF note format counts it.
struct ElfNote {
  uint32_t type;
  ByteSpan name;
  ByteSpan desc;

  bool has_name(const char* expected) const { return name.equals_c_string(expected); }
};

// Walks the note records of one PT_NOTE segment or SHT_NOTE section.
class NoteCursor {
 public:
  enum class Step : uint8_t { note, end, malformed };

  // `alignment` is the area's p_align / sh_addralign: 8 means 8-byte padding, else 4.
  constexpr NoteCursor(ByteSpan area, uint64_t alignment) : area_(area), padding_(alignment == 8 ? 8 : 4) {}

  Step next(ElfNote& note);

 private:
  ByteSpan area_;
  uint64_t padding_;
  uint64_t offset_ = 0;
};

class ElfImage {
 public:
  constexpr ElfImage() = default;

  // Validates the header, every program header and PT_LOAD/PT_NOTE range, and every section
  // header and SHT_NOTE range. On error `out` is left untouched.
  static ElfError parse(ByteSpan image, ElfImage& out);

  constexpr ByteSpan bytes() const { return image_; }
  constexpr uint64_t entry() const { return entry_; }
  constexpr uint16_t program_header_count() const { return program_header_count_; }
  constexpr uint16_t section_header_count() const { return section_header_count_; }

  ElfSegment program_header(uint16_t index) const;
  ElfSection section_header(uint16_t index) const;

  // The file bytes of a segment (its p_filesz bytes) or section.
  ByteSpan file_bytes(const ElfSegment& segment) const;
  ByteSpan file_bytes(const ElfSection& section) const;

  // [lowest p_paddr, highest p_paddr + p_memsz) over loadable segments: Xen's pstart/pend.
  constexpr uint64_t physical_start() const { return physical_start_; }
  constexpr uint64_t physical_end() const { return physical_end_; }

  template <typename Visitor>
  void for_each_loadable_segment(Visitor&& visit) const {
    for (uint16_t i = 0; i < program_header_count_; ++i) {
      ElfSegment segment = program_header(i);
      if (segment.is_loadable()) visit(segment);
    }
  }

 private:
  ElfError validate_program_headers();
  ElfError validate_section_headers();

  ByteSpan image_;
  uint64_t entry_ = 0;
  uint64_t program_header_offset_ = 0;
  uint64_t section_header_offset_ = 0;
  uint16_t program_header_count_ = 0;
  uint16_t section_header_count_ = 0;
  uint64_t physical_start_ = 0;
  uint64_t physical_end_ = 0;
};

}  // namespace boot
