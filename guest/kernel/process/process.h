#pragma once
// User processes: a process table (kernel/process/process_table.h) plus, per slot, an address space,
// heap (brk), demand-paged regions (stack, anonymous mmap), the saved user registers and FS
// base. One process runs at a time; the kernel switches on wait4 (the parent blocks until a
// child exits) and on exit. All processes share the one kernel stack: a process that is not
// running has its registers in its TrapFrame, and is resumed by copying them back to the top
// of the kernel stack and returning to user mode from there.
#include <stdint.h>

#include "kernel/process/address_space.h"
#include "arch/trap_frame.h"
#include "kernel/process/process_table.h"
#include "kernel/process/region_set.h"

namespace kernel {

constexpr uint64_t kStackTop = 0x00007ffffffff000ull;
constexpr uint64_t kStackSize = 8ull << 20;
constexpr uint64_t kMmapTop = 0x00007f0000000000ull;
constexpr uint64_t kMmapFloor = 0x0000100000000000ull;
constexpr uint64_t kHeapLimit = 1ull << 30;  // brk may grow this far past its start

struct Process {
  int slot = -1;
  int pid = 0;
  AddressSpace space;
  uint64_t heap_start = 0;  // initial program break (page-aligned end of the image)
  uint64_t heap_end = 0;    // current program break
  lib::RegionSet demand;    // stack and anonymous mappings: faults there get zero pages
  uint64_t fs_base = 0;
  TrapFrame frame{};  // user registers while not running
  unsigned spurious_faults = 0;
};

Process& current_process();
lib::ProcessTable& process_table();

// Loads `path` from the initrd and runs it in user mode as pid 1. Never returns.
[[noreturn]] void process_run_init(const char* path);

// System calls that create, replace, end and wait for processes. `frame` is the caller's
// registers on the kernel stack.
long process_fork(TrapFrame& frame);
// argv/envp are user pointers of the caller. On success the frame is the new program's.
long process_execve(TrapFrame& frame, uint64_t path, uint64_t argv, uint64_t envp);
[[noreturn]] void process_exit(int wait_status);
long process_wait4(TrapFrame& frame, long pid, uint64_t status, uint64_t options, uint64_t rusage);
long process_set_fs_base(uint64_t base);

// Makes every page of [address, address+length) accessible to the kernel for a system call:
// pages in the heap or a demand region are mapped now, copy-on-write pages are copied when
// write is asked for. False if any page is outside them (or read-only when write is asked
// for): the system call then fails with -EFAULT.
bool user_range_ready(uint64_t address, uint64_t length, bool write);
// Copies a NUL-terminated string from user memory; false if it faults or does not fit.
bool copy_user_string(uint64_t address, char* out, uint64_t capacity);
// Maps a zero page at the page containing address if it lies in the heap or a demand
// region and is not mapped yet.
bool demand_map(uint64_t address);
// Unmaps and releases every mapped page in [start, end).
void release_range(uint64_t start, uint64_t end);

void user_page_fault(TrapFrame& frame, uint64_t address);
void user_exception(TrapFrame& frame, const char* name);

}  // namespace kernel
