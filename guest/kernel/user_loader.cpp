#include "kernel/user_loader.h"

#include "arch/xen.h"
#include "kernel/boot_info.h"
#include "kernel/console.h"
#include "kernel/linux_abi.h"
#include "kernel/page_allocator.h"
#include "kernel/physical_memory.h"
#include "kernel/process.h"
#include "kernel/time.h"
#include "lib/cpio.h"
#include "lib/elf.h"

namespace kernel {
namespace {

using lib::ElfImage;
using lib::ElfSegment;

uint64_t min(uint64_t a, uint64_t b) { return a < b ? a : b; }
uint64_t max(uint64_t a, uint64_t b) { return a > b ? a : b; }

// Copies the file bytes of `segment` that fall into the page at page_va.
void fill_page(uint8_t* page, uint64_t page_va, const ElfSegment& segment, const uint8_t* file) {
  uint64_t from = max(page_va, segment.vaddr);
  uint64_t to = min(page_va + lib::kPageSize, segment.vaddr + segment.filesz);
  for (uint64_t va = from; va < to; ++va) {
    page[va - page_va] = file[segment.offset + (va - segment.vaddr)];
  }
}

void load_segment(Process& process, const ElfSegment& segment, const uint8_t* file) {
  bool writable = segment.flags & ElfImage::kWrite;
  uint64_t end = segment.vaddr + segment.memsz;
  for (uint64_t page_va = lib::page_floor(segment.vaddr); page_va < end;
       page_va += lib::kPageSize) {
    // Two segments may share a boundary page: reuse the frame, keep the wider rights.
    PageTableEntry existing = process.space.lookup(page_va);
    Pfn frame = existing.present() ? mfn_to_pfn(existing.mfn()) : allocate_zeroed_frame();
    fill_page(pfn_pointer<uint8_t>(frame), page_va, segment, file);
    process.space.map(page_va, frame, writable || existing.writable());
  }
}

// Builds the initial stack: strings and random bytes at the top, then (16-byte aligned at
// argc) argc, argv[], NULL, envp NULL, auxv pairs.
uint64_t build_stack(Process& process, const char* path, const ElfImage& image) {
  uint64_t sp = kStackTop;
  size_t path_length = 0;
  while (path[path_length] != '\0') ++path_length;
  user_range_ready(kStackTop - lib::kPageSize, lib::kPageSize, true);

  sp -= path_length + 1;
  uint64_t argv0 = sp;
  __builtin_memcpy(reinterpret_cast<void*>(argv0), path, path_length + 1);
  sp = (sp - 16) & ~uint64_t{15};
  uint64_t random = sp;
  uint64_t seed = wallclock_ns() ^ (system_time_ns() << 17);  // AT_RANDOM: no better source
  __builtin_memcpy(reinterpret_cast<void*>(random), &seed, 8);
  seed = seed * 6364136223846793005ull + 1442695040888963407ull;
  __builtin_memcpy(reinterpret_cast<void*>(random + 8), &seed, 8);

  using namespace linux_abi;
  const uint64_t auxv[][2] = {
      {kAtPhdr, image.program_headers_vaddr}, {kAtPhent, image.program_header_size},
      {kAtPhnum, image.program_header_count}, {kAtPagesz, lib::kPageSize},
      {kAtEntry, image.entry}, {kAtUid, 0}, {kAtEuid, 0}, {kAtGid, 0}, {kAtEgid, 0},
      {kAtSecure, 0}, {kAtRandom, random}, {kAtNull, 0}};
  constexpr size_t kAuxWords = sizeof(auxv) / sizeof(uint64_t);
  uint64_t words[4 + kAuxWords] = {1, argv0, 0, 0};  // argc, argv[0], NULL, envp NULL
  __builtin_memcpy(words + 4, auxv, sizeof(auxv));

  sp -= sizeof(words);
  sp &= ~uint64_t{15};
  __builtin_memcpy(reinterpret_cast<void*>(sp), words, sizeof(words));
  return sp;
}

}  // namespace

bool user_load(Process& process, const char* path, TrapFrame& frame) {
  lib::CpioEntry entry;
  lib::CpioStatus found = lib::cpio_find(boot_info.initrd, boot_info.initrd_size, path, entry);
  if (found != lib::CpioStatus::ok) {
    print("init: %s: %s\n", path, lib::cpio_status_name(found));
    return false;
  }
  ElfImage image;
  lib::ElfStatus parsed = lib::elf_parse(entry.data, entry.size, kUserLimit, image);
  if (parsed != lib::ElfStatus::ok) {
    print("init: %s: %s\n", path, lib::elf_status_name(parsed));
    return false;
  }
  for (size_t i = 0; i < image.segment_count; ++i) {
    load_segment(process, image.segments[i], entry.data);
  }
  process.heap_start = process.heap_end = lib::page_ceil(image.highest_address);

  frame.rip = image.entry;
  frame.cs = FLAT_USER_CS64;
  frame.rflags = 0x202;  // IF: user mode always runs with events enabled
  frame.rsp = build_stack(process, path, image);
  frame.ss = FLAT_USER_SS64;
  return true;
}

}  // namespace kernel
