#include "kernel/process/user_loader.h"

#include "arch/xen.h"
#include "kernel/boot/boot_info.h"
#include "kernel/console/console.h"
#include "lib/linux_abi.h"
#include "kernel/memory/page_allocator.h"
#include "kernel/memory/physical_memory.h"
#include "kernel/process/process.h"
#include "kernel/events/time.h"
#include "kernel/process/user_stack.h"

namespace kernel {
namespace {

using lib::ElfImage;
using lib::ElfSegment;

uint64_t min(uint64_t a, uint64_t b) { return a < b ? a : b; }
uint64_t max(uint64_t a, uint64_t b) { return a > b ? a : b; }

// The initial stack, built before the new address space exists (execve must fail cleanly
// without touching the caller if the arguments do not fit).
constexpr size_t kStackImagePages = 8;
constexpr size_t kStackImageSize = kStackImagePages * lib::kPageSize;
alignas(4096) uint8_t stack_image[kStackImageSize];
uint64_t stack_pointer;

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
  for (uint64_t page_va = lib::page_floor(segment.vaddr); page_va < end; page_va += lib::kPageSize) {
    // Two segments may share a boundary page: reuse the frame, keep the wider rights.
    PageTableEntry existing = process.space.lookup(page_va);
    Pfn frame = existing.present() ? mfn_to_pfn(existing.mfn()) : allocate_zeroed_frame();
    fill_page(pfn_pointer<uint8_t>(frame), page_va, segment, file);
    process.space.map(page_va, frame, writable || existing.writable());
  }
}

}  // namespace

long user_find(const char* path, UserImage& image) {
  lib::CpioStatus found = lib::cpio_find(boot_info.initrd, boot_info.initrd_size, path, image.file);
  if (found == lib::CpioStatus::not_found) return -linux_abi::kENOENT;  // a normal answer
  if (found != lib::CpioStatus::ok) {
    print("exec: %s: %s\n", path, lib::cpio_status_name(found));
    return -linux_abi::kENOENT;
  }
  lib::ElfStatus parsed = lib::elf_parse(image.file.data, image.file.size, kUserLimit, image.elf);
  if (parsed != lib::ElfStatus::ok) {
    print("exec: %s: %s\n", path, lib::elf_status_name(parsed));
    return -linux_abi::kENOEXEC;
  }
  return 0;
}

long user_prepare_stack(const UserImage& image, const UserArguments& arguments) {
  using namespace linux_abi;
  const ElfImage& elf = image.elf;
  const uint64_t auxv[][2] = {{kAtPhdr, elf.program_headers_vaddr},
                              {kAtPhent, elf.program_header_size},
                              {kAtPhnum, elf.program_header_count},
                              {kAtPagesz, lib::kPageSize},
                              {kAtEntry, elf.entry},
                              {kAtUid, 0},
                              {kAtEuid, 0},
                              {kAtGid, 0},
                              {kAtEgid, 0},
                              {kAtSecure, 0}};
  lib::UserStackInput input{
      arguments.argv, arguments.argc, arguments.envp, arguments.envc, auxv, sizeof(auxv) / sizeof(auxv[0]), {}};
  // AT_RANDOM: no better source of entropy than the clocks.
  uint64_t seed = wallclock_ns() ^ (system_time_ns() << 17);
  __builtin_memcpy(input.random, &seed, 8);
  seed = seed * 6364136223846793005ull + 1442695040888963407ull;
  __builtin_memcpy(input.random + 8, &seed, 8);
  __builtin_memset(stack_image, 0, sizeof(stack_image));
  lib::UserStackLayout layout = lib::build_user_stack(input, kStackTop, stack_image, kStackImageSize);
  if (layout.rsp == 0) return -kE2BIG;
  stack_pointer = layout.rsp;
  return 0;
}

void user_load(Process& process, const UserImage& image, TrapFrame& frame) {
  for (size_t i = 0; i < image.elf.segment_count; ++i) {
    load_segment(process, image.elf.segments[i], image.file.data);
  }
  process.heap_start = process.heap_end = lib::page_ceil(image.elf.highest_address);
  process.demand = lib::RegionSet();
  process.demand.add(kStackTop - kStackSize, kStackTop);
  // The pages of the stack that hold the arguments, filled now; the rest is demand-paged.
  for (uint64_t page = lib::page_floor(stack_pointer); page < kStackTop; page += lib::kPageSize) {
    Pfn pfn = allocate_zeroed_frame();
    __builtin_memcpy(pfn_pointer<uint8_t>(pfn), stack_image + (page - (kStackTop - kStackImageSize)), lib::kPageSize);
    process.space.map(page, pfn, true);
  }
  pv::ops.flush();

  __builtin_memset(&frame, 0, sizeof(frame));
  frame.rip = image.elf.entry;
  frame.cs = FLAT_USER_CS64;
  frame.rflags = 0x202;  // IF: user mode always runs with events enabled
  frame.rsp = stack_pointer;
  frame.ss = FLAT_USER_SS64;
}

}  // namespace kernel
