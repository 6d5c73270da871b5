#pragma once
// The single user process (init): its address space, heap (brk), demand-paged regions
// (stack, anonymous mmap), and what happens when it faults or exits.
#include <stdint.h>

#include "kernel/address_space.h"
#include "kernel/trap_frame.h"
#include "lib/region_set.h"

namespace kernel {

constexpr uint64_t kStackTop = 0x00007ffffffff000ull;
constexpr uint64_t kStackSize = 8ull << 20;
constexpr uint64_t kMmapTop = 0x00007f0000000000ull;
constexpr uint64_t kMmapFloor = 0x0000100000000000ull;
constexpr uint64_t kHeapLimit = 1ull << 30;  // brk may grow this far past its start

struct Process {
  int pid = 1;
  AddressSpace space;
  uint64_t heap_start = 0;  // initial program break (page-aligned end of the image)
  uint64_t heap_end = 0;    // current program break
  lib::RegionSet demand;    // stack and anonymous mappings: faults there get zero pages
};

Process& current_process();

// Loads `path` from the initrd and runs it in user mode. Never returns.
[[noreturn]] void process_run_init(const char* path);
[[noreturn]] void process_exit(int status);

// Makes every page of [address, address+length) accessible to the kernel for a system call:
// pages in the heap or a demand region are mapped now. False if any page is outside them
// (or read-only when write is asked for): the system call then fails with -EFAULT.
bool user_range_ready(uint64_t address, uint64_t length, bool write);
// Maps a zero page at the page containing address if it lies in the heap or a demand
// region and is not mapped yet.
bool demand_map(uint64_t address);
// Unmaps and frees every mapped page in [start, end).
void release_range(uint64_t start, uint64_t end);

void user_page_fault(TrapFrame& frame, uint64_t address);
void user_exception(TrapFrame& frame, const char* name);

}  // namespace kernel
