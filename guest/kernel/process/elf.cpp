#include "elf.h"

namespace lib {
namespace {

// Field offsets of the ELF64 file header and program header (System V gABI).
constexpr size_t kHeaderSize = 64;
constexpr size_t kProgramHeaderSize = 56;
constexpr uint16_t kTypeExecutable = 2;
constexpr uint16_t kMachineX86_64 = 62;
constexpr uint32_t kLoad = 1;

template <typename T>
T read(const uint8_t* at) {
  T value;
  __builtin_memcpy(&value, at, sizeof(T));  // unaligned-safe, little-endian host and guest
  return value;
}

bool add_overflows(uint64_t a, uint64_t b, uint64_t& sum) { return __builtin_add_overflow(a, b, &sum); }

ElfStatus check_identity(const uint8_t* file, size_t size) {
  if (size < kHeaderSize) return ElfStatus::truncated;
  if (file[0] != 0x7f || file[1] != 'E' || file[2] != 'L' || file[3] != 'F') {
    return ElfStatus::bad_magic;
  }
  if (file[4] != 2) return ElfStatus::not_64bit;
  if (file[5] != 1) return ElfStatus::not_little_endian;
  if (file[6] != 1 || read<uint32_t>(file + 20) != 1) return ElfStatus::bad_version;
  if (read<uint16_t>(file + 18) != kMachineX86_64) return ElfStatus::wrong_machine;
  if (read<uint16_t>(file + 16) != kTypeExecutable) return ElfStatus::not_executable;
  return ElfStatus::ok;
}

ElfStatus check_segment(const ElfSegment& segment, size_t size, uint64_t user_limit) {
  uint64_t file_end, memory_end;
  if (segment.filesz > segment.memsz) return ElfStatus::bad_segment;
  if (add_overflows(segment.offset, segment.filesz, file_end) || file_end > size) {
    return ElfStatus::bad_segment;
  }
  if (add_overflows(segment.vaddr, segment.memsz, memory_end)) return ElfStatus::bad_segment;
  if (memory_end > user_limit || segment.vaddr < 4096) {
    return ElfStatus::segment_outside_user_space;
  }
  return ElfStatus::ok;
}

ElfStatus collect_segments(const uint8_t* file, size_t size, uint64_t user_limit, uint64_t table, ElfImage& image) {
  for (uint16_t i = 0; i < image.program_header_count; ++i) {
    const uint8_t* header = file + table + size_t{i} * kProgramHeaderSize;
    if (read<uint32_t>(header) != kLoad) continue;
    if (image.segment_count == ElfImage::kMaxSegments) return ElfStatus::too_many_segments;
    ElfSegment segment{read<uint64_t>(header + 16), read<uint64_t>(header + 40), read<uint64_t>(header + 8),
                       read<uint64_t>(header + 32), read<uint32_t>(header + 4)};
    ElfStatus status = check_segment(segment, size, user_limit);
    if (status != ElfStatus::ok) return status;
    image.segments[image.segment_count++] = segment;
    if (segment.vaddr + segment.memsz > image.highest_address) {
      image.highest_address = segment.vaddr + segment.memsz;
    }
    // AT_PHDR: where the program header table lands in memory, if a segment maps it.
    if (table >= segment.offset && table - segment.offset < segment.filesz) {
      image.program_headers_vaddr = segment.vaddr + (table - segment.offset);
    }
  }
  return image.segment_count == 0 ? ElfStatus::no_loadable_segment : ElfStatus::ok;
}

bool entry_is_executable(const ElfImage& image) {
  for (size_t i = 0; i < image.segment_count; ++i) {
    const ElfSegment& segment = image.segments[i];
    if ((segment.flags & ElfImage::kExecute) && image.entry >= segment.vaddr &&
        image.entry - segment.vaddr < segment.memsz) {
      return true;
    }
  }
  return false;
}

}  // namespace

const char* elf_status_name(ElfStatus status) {
  switch (status) {
    case ElfStatus::ok: return "ok";
    case ElfStatus::truncated: return "truncated file";
    case ElfStatus::bad_magic: return "not an ELF file";
    case ElfStatus::not_64bit: return "not ELF64";
    case ElfStatus::not_little_endian: return "not little-endian";
    case ElfStatus::bad_version: return "bad ELF version";
    case ElfStatus::wrong_machine: return "not x86-64";
    case ElfStatus::not_executable: return "not a static executable (ET_EXEC)";
    case ElfStatus::bad_program_headers: return "bad program header table";
    case ElfStatus::bad_segment: return "bad segment";
    case ElfStatus::segment_outside_user_space: return "segment outside user space";
    case ElfStatus::too_many_segments: return "too many segments";
    case ElfStatus::no_loadable_segment: return "no loadable segment";
    case ElfStatus::bad_entry: return "entry point outside executable segments";
  }
  return "?";
}

ElfStatus elf_parse(const void* data, size_t size, uint64_t user_limit, ElfImage& image) {
  const uint8_t* file = static_cast<const uint8_t*>(data);
  image = ElfImage{};
  ElfStatus status = check_identity(file, size);
  if (status != ElfStatus::ok) return status;

  image.entry = read<uint64_t>(file + 24);
  uint64_t table = read<uint64_t>(file + 32);
  image.program_header_size = read<uint16_t>(file + 54);
  image.program_header_count = read<uint16_t>(file + 56);
  uint64_t table_end;
  if (image.program_header_size != kProgramHeaderSize || image.program_header_count == 0 ||
      add_overflows(table, uint64_t{image.program_header_count} * kProgramHeaderSize, table_end) || table_end > size) {
    return ElfStatus::bad_program_headers;
  }
  status = collect_segments(file, size, user_limit, table, image);
  if (status != ElfStatus::ok) return status;
  return entry_is_executable(image) ? ElfStatus::ok : ElfStatus::bad_entry;
}

}  // namespace lib
