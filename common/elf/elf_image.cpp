#include "common/elf/elf_image.h"

namespace boot {

const char* describe(ElfError error) {
  switch (error) {
    case ElfError::none: return "no error";
    case ElfError::not_elf: return "not an ELF file";
    case ElfError::not_64bit_x86_64: return "not a 64-bit x86-64 ELF";
    case ElfError::not_little_endian: return "not a little-endian ELF";
    case ElfError::bad_version: return "unsupported ELF version";
    case ElfError::not_executable: return "not an executable ELF (ET_EXEC)";
    case ElfError::header_truncated: return "ELF header truncated";
    case ElfError::bad_program_header_size: return "unexpected program header entry size";
    case ElfError::extended_numbering: return "extended program header numbering unsupported";
    case ElfError::program_headers_out_of_bounds: return "program header out of bounds";
    case ElfError::segment_out_of_bounds: return "segment out of bounds";
    case ElfError::segment_memsz_below_filesz: return "segment memory size below file size";
    case ElfError::segment_address_overflow: return "segment address range wraps around";
    case ElfError::segments_overlap: return "loadable segments overlap";
    case ElfError::no_loadable_segment: return "no loadable segment";
    case ElfError::bad_section_header_size: return "unexpected section header entry size";
    case ElfError::section_headers_out_of_bounds: return "section header out of bounds";
    case ElfError::note_area_out_of_bounds: return "note segment or section out of bounds";
    case ElfError::malformed_note: return "malformed ELF note";
  }
  return "unknown ELF error";
}

namespace {

// Offsets inside the ELF64 file header, program header and section header (System V gABI).
namespace ehdr {
constexpr uint64_t ident_class = 4, ident_data = 5, ident_version = 6;
constexpr uint64_t type = 16, machine = 18, version = 20, entry = 24, phoff = 32, shoff = 40;
constexpr uint64_t phentsize = 54, phnum = 56, shentsize = 58, shnum = 60;
constexpr uint8_t class_64 = 2, data_lsb = 1, current_version = 1;
constexpr uint16_t extended_count = 0xffff;
}  // namespace ehdr

namespace phdr {
constexpr uint64_t type = 0, flags = 4, offset = 8, vaddr = 16, paddr = 24, filesz = 32, memsz = 40, align = 48;
}

namespace shdr {
constexpr uint64_t type = 4, offset = 24, size = 32, addralign = 48;
}

constexpr bool has_elf_magic(ByteSpan image) {
  return image.size() >= 4 && image.u8(0) == 0x7f && image.u8(1) == 'E' && image.u8(2) == 'L' && image.u8(3) == 'F';
}

ElfError check_identity(ByteSpan image) {
  if (!has_elf_magic(image)) return ElfError::not_elf;
  if (image.size() < elf::header_size) return ElfError::header_truncated;
  if (image.u8(ehdr::ident_class) != ehdr::class_64) return ElfError::not_64bit_x86_64;
  if (image.u8(ehdr::ident_data) != ehdr::data_lsb) return ElfError::not_little_endian;
  if (image.u8(ehdr::ident_version) != ehdr::current_version || image.u32(ehdr::version) != ehdr::current_version)
    return ElfError::bad_version;
  if (image.u16(ehdr::machine) != elf::em_x86_64) return ElfError::not_64bit_x86_64;
  if (image.u16(ehdr::type) != elf::et_exec) return ElfError::not_executable;
  return ElfError::none;
}

// A table of `count` entries of `entry_size` bytes at `offset` must lie inside the image.
constexpr bool table_fits(ByteSpan image, uint64_t offset, uint64_t count, uint64_t entry_size) {
  return image.contains(offset, count * entry_size);
}

constexpr bool ranges_overlap(uint64_t a_start, uint64_t a_size, uint64_t b_start, uint64_t b_size) {
  return a_size != 0 && b_size != 0 && a_start < b_start + b_size && b_start < a_start + a_size;
}

ElfError check_load_segment(ByteSpan image, const ElfSegment& segment) {
  if (!image.contains(segment.file_offset, segment.file_size)) return ElfError::segment_out_of_bounds;
  if (segment.memory_size < segment.file_size) return ElfError::segment_memsz_below_filesz;
  if (add_overflows(segment.physical_address, segment.memory_size) ||
      add_overflows(segment.virtual_address, segment.memory_size))
    return ElfError::segment_address_overflow;
  return ElfError::none;
}

}  // namespace

ElfError ElfImage::parse(ByteSpan image, ElfImage& out) {
  ElfError error = check_identity(image);
  if (error != ElfError::none) return error;

  ElfImage parsed;
  parsed.image_ = image;
  parsed.entry_ = image.u64(ehdr::entry);
  parsed.program_header_offset_ = image.u64(ehdr::phoff);
  parsed.program_header_count_ = image.u16(ehdr::phnum);
  parsed.section_header_offset_ = image.u64(ehdr::shoff);
  parsed.section_header_count_ = image.u16(ehdr::shnum);

  if (parsed.program_header_count_ == ehdr::extended_count) return ElfError::extended_numbering;
  if (parsed.program_header_count_ != 0 && image.u16(ehdr::phentsize) != elf::program_header_size)
    return ElfError::bad_program_header_size;
  if (parsed.section_header_count_ != 0 && image.u16(ehdr::shentsize) != elf::section_header_size)
    return ElfError::bad_section_header_size;

  if ((error = parsed.validate_program_headers()) != ElfError::none) return error;
  if ((error = parsed.validate_section_headers()) != ElfError::none) return error;
  out = parsed;
  return ElfError::none;
}

ElfError ElfImage::validate_program_headers() {
  if (!table_fits(image_, program_header_offset_, program_header_count_, elf::program_header_size))
    return ElfError::program_headers_out_of_bounds;

  bool found_loadable = false;
  uint64_t low = ~uint64_t(0), high = 0;
  for (uint16_t i = 0; i < program_header_count_; ++i) {
    ElfSegment segment = program_header(i);
    if (segment.type == elf::pt_note && !image_.contains(segment.file_offset, segment.file_size))
      return ElfError::note_area_out_of_bounds;
    if (!segment.is_load()) continue;
    ElfError error = check_load_segment(image_, segment);
    if (error != ElfError::none) return error;
    // Overlapping loads would silently overwrite each other in the guest's memory.
    for (uint16_t j = 0; j < i; ++j) {
      ElfSegment earlier = program_header(j);
      if (earlier.is_load() &&
          ranges_overlap(segment.physical_address, segment.memory_size, earlier.physical_address, earlier.memory_size))
        return ElfError::segments_overlap;
    }
    if (!segment.is_loadable()) continue;
    found_loadable = true;
    if (segment.physical_address < low) low = segment.physical_address;
    if (segment.physical_address + segment.memory_size > high) high = segment.physical_address + segment.memory_size;
  }
  if (!found_loadable) return ElfError::no_loadable_segment;
  physical_start_ = low;
  physical_end_ = high;
  return ElfError::none;
}

ElfError ElfImage::validate_section_headers() {
  if (section_header_count_ == 0) return ElfError::none;
  if (!table_fits(image_, section_header_offset_, section_header_count_, elf::section_header_size))
    return ElfError::section_headers_out_of_bounds;
  for (uint16_t i = 0; i < section_header_count_; ++i) {
    ElfSection section = section_header(i);
    if (section.type == elf::sht_note && !image_.contains(section.file_offset, section.size))
      return ElfError::note_area_out_of_bounds;
  }
  return ElfError::none;
}

ElfSegment ElfImage::program_header(uint16_t index) const {
  uint64_t base = program_header_offset_ + uint64_t(index) * elf::program_header_size;
  return ElfSegment{
      .type = image_.u32(base + phdr::type),
      .flags = image_.u32(base + phdr::flags),
      .file_offset = image_.u64(base + phdr::offset),
      .virtual_address = image_.u64(base + phdr::vaddr),
      .physical_address = image_.u64(base + phdr::paddr),
      .file_size = image_.u64(base + phdr::filesz),
      .memory_size = image_.u64(base + phdr::memsz),
      .alignment = image_.u64(base + phdr::align),
  };
}

ElfSection ElfImage::section_header(uint16_t index) const {
  uint64_t base = section_header_offset_ + uint64_t(index) * elf::section_header_size;
  return ElfSection{
      .type = image_.u32(base + shdr::type),
      .file_offset = image_.u64(base + shdr::offset),
      .size = image_.u64(base + shdr::size),
      .alignment = image_.u64(base + shdr::addralign),
  };
}

ByteSpan ElfImage::file_bytes(const ElfSegment& segment) const {
  return image_.sub(segment.file_offset, segment.file_size);
}

ByteSpan ElfImage::file_bytes(const ElfSection& section) const { return image_.sub(section.file_offset, section.size); }

NoteCursor::Step NoteCursor::next(ElfNote& note) {
  if (offset_ >= area_.size()) return Step::end;
  if (!area_.contains(offset_, elf::note_header_size)) return Step::malformed;
  uint64_t name_size = area_.u32(offset_);
  uint64_t desc_size = area_.u32(offset_ + 4);
  uint32_t type = area_.u32(offset_ + 8);
  // 32-bit sizes in a 64-bit sum cannot overflow; contains() catches anything too large.
  uint64_t name_offset = offset_ + elf::note_header_size;
  uint64_t desc_offset = round_up(name_offset + name_size, padding_);
  if (!area_.contains(name_offset, name_size) || !area_.contains(desc_offset, desc_size)) return Step::malformed;
  note = ElfNote{type, area_.sub(name_offset, name_size), area_.sub(desc_offset, desc_size)};
  offset_ = round_up(desc_offset + desc_size, padding_);
  return Step::note;
}

}  // namespace boot
