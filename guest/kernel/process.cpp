#include "kernel/process.h"

#include "arch/xen.h"
#include "kernel/console.h"
#include "kernel/page_allocator.h"
#include "kernel/panic.h"
#include "kernel/physical_memory.h"
#include "kernel/user_loader.h"
#include "pv-kernel-patches/pv_ops.h"

namespace kernel {
namespace {

Process init_process;

// The stack Xen switches to on every entry from user mode (HYPERVISOR_stack_switch).
alignas(16) uint8_t kernel_stack[64 * 1024];

uint64_t kernel_stack_top() { return reinterpret_cast<uint64_t>(kernel_stack + sizeof(kernel_stack)); }

bool in_heap(const Process& process, uint64_t address) {
  return address >= process.heap_start && address < lib::page_ceil(process.heap_end);
}

// Linux reports death by signal as 128 + signal number; SIGSEGV is 11.
constexpr int kKilledBySegv = 128 + 11;

}  // namespace

Process& current_process() { return init_process; }

bool demand_map(uint64_t address) {
  Process& process = init_process;
  if (!in_heap(process, address) && process.demand.find(address) == nullptr) return false;
  uint64_t page = lib::page_floor(address);
  if (process.space.lookup(page).present()) return true;
  bool mapped = process.space.map(page, allocate_zeroed_frame(), true);
  pv::ops.flush();  // the page is used right after this: leave lazy (batched) mode
  return mapped;
}

bool user_range_ready(uint64_t address, uint64_t length, bool write) {
  if (length == 0) return true;
  uint64_t end;
  if (__builtin_add_overflow(address, length, &end) || end > kUserLimit) return false;
  for (uint64_t page = lib::page_floor(address); page < end; page += lib::kPageSize) {
    PageTableEntry entry = init_process.space.lookup(page);
    if (entry.present()) {
      if (write && !entry.writable()) return false;
      continue;
    }
    if (!demand_map(page)) return false;
  }
  return true;
}

void release_range(uint64_t start, uint64_t end) {
  for (uint64_t page = lib::page_floor(start); page < end; page += lib::kPageSize) {
    Pfn frame;
    if (init_process.space.unmap(page, frame)) page_allocator.free(frame);
  }
}

void process_run_init(const char* path) {
  Process& process = init_process;
  process.space.create();
  process.demand.add(kStackTop - kStackSize, kStackTop);
  TrapFrame* frame = reinterpret_cast<TrapFrame*>(kernel_stack_top() - sizeof(TrapFrame));
  __builtin_memset(frame, 0, sizeof(*frame));
  if (!user_load(process, path, *frame)) panic("cannot start %s", path);

  if (pv::ops.set_user_base(process.space.user_l4()) < 0) panic("new_user_baseptr failed");
  if (pv::ops.set_kernel_stack(kernel_stack_top()) < 0) panic("stack_switch failed");
  print("init: starting %s (entry %lx, pte=%s)\n", path, frame->rip,
        pv::pte_mode_name(pv::ops.mode()));
  pv::ops.return_to_user(frame);
}

void process_exit(int status) {
  print("pv: %lu page-table entries written, %lu hypercalls (pte=%s)\n", pv::ops.entries_written(),
        pv::ops.hypercalls_issued(), pv::pte_mode_name(pv::ops.mode()));
  print("init exited: status %d\n", status);
  xen::shutdown(status == 0 ? SHUTDOWN_poweroff : SHUTDOWN_crash);
}

void user_page_fault(TrapFrame& frame, uint64_t address) {
  constexpr uint64_t kProtectionViolation = 1;
  if (!(frame.error_code & kProtectionViolation) && demand_map(address)) return;
  print("init: segmentation fault at 0x%lx (rip 0x%lx, error 0x%lx)\n", address, frame.rip,
        frame.error_code);
  process_exit(kKilledBySegv);
}

void user_exception(TrapFrame& frame, const char* name) {
  print("init: %s at rip 0x%lx (error 0x%lx)\n", name, frame.rip, frame.error_code);
  process_exit(kKilledBySegv);
}

}  // namespace kernel
