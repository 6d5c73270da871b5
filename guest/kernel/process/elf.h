#pragma once
// Parses (and distrusts) a static ELF64 x86-64 executable: the header, the program header
// table and every PT_LOAD segment are checked against the file size and the user address
// range before the loader copies anything.
#include <stddef.h>
#include <stdint.h>

namespace lib {

enum class ElfStatus {
  ok,
  truncated,
  bad_magic,
  not_64bit,
  not_little_endian,
  bad_version,
  wrong_machine,
  not_executable,  // ET_DYN (PIE) and ET_REL are not supported
  bad_program_headers,
  bad_segment,  // file range outside the file, filesz > memsz, or address overflow
  segment_outside_user_space,
  too_many_segments,
  no_loadable_segment,
  bad_entry,  // the entry point is not inside an executable segment
};

const char* elf_status_name(ElfStatus status);

struct ElfSegment {
  uint64_t vaddr;
  uint64_t memsz;
  uint64_t offset;
  uint64_t filesz;
  uint32_t flags;  // PF_X = 1, PF_W = 2, PF_R = 4
};

struct ElfImage {
  static constexpr size_t kMaxSegments = 8;
  static constexpr uint32_t kExecute = 1, kWrite = 2, kRead = 4;

  uint64_t entry;
  uint64_t program_headers_vaddr;  // for AT_PHDR; 0 if the table is not inside a segment
  uint16_t program_header_count;
  uint16_t program_header_size;
  size_t segment_count;
  ElfSegment segments[kMaxSegments];
  uint64_t highest_address;  // end of the highest segment (initial program break)
};

// user_limit: first address that is not user space (segments must end at or below it).
ElfStatus elf_parse(const void* file, size_t size, uint64_t user_limit, ElfImage& image);

}  // namespace lib
