#include "kernel/process/process.h"
#include "kernel/measurement/trace_capture.h"
#include "lib/cmdline.h"

#include "arch/xen.h"
#include "kernel/console/console.h"
#include "lib/linux_abi.h"
#include "kernel/memory/page_allocator.h"
#include "kernel/console/panic.h"
#include "kernel/memory/physical_memory.h"
#include "kernel/process/user_loader.h"
#include "common/format.h"
#include "kernel/process/copy_on_write.h"
#include "pv-kernel-patches/pv_ops.h"

namespace kernel {
namespace {

using namespace linux_abi;
using lib::ProcessState;

lib::ProcessTable table;
Process processes[lib::ProcessTable::kCapacity];
Process* current;

// The stack Xen switches to on every entry from user mode (HYPERVISOR_stack_switch), shared
// by all processes: nothing of a process stays on it while another one runs.
alignas(16) uint8_t kernel_stack[64 * 1024];

uint64_t kernel_stack_top() { return reinterpret_cast<uint64_t>(kernel_stack + sizeof(kernel_stack)); }

constexpr int kSigill = 4, kSigtrap = 5, kSigfpe = 8, kSigsegv = 11;
constexpr uint64_t kSyscallInstructionLength = 2;  // 0f 05

bool in_heap(const Process& process, uint64_t address) {
  return address >= process.heap_start && address < lib::page_ceil(process.heap_end);
}

bool in_demand_region(const Process& process, uint64_t address) {
  return in_heap(process, address) || process.demand.find(address) != nullptr;
}

// Makes `next` the process of the CPU: its address space and FS base.
void switch_to(Process& next) {
  if (current == &next) return;
  current = &next;
  next.space.activate();
  if (pv::ops.set_user_fs_base(next.fs_base) < 0) panic("set_segment_base failed");
}

// Returns to user mode in the current process, from its saved registers.
[[noreturn]] void resume_current() {
  TrapFrame* frame = reinterpret_cast<TrapFrame*>(kernel_stack_top() - sizeof(TrapFrame));
  __builtin_memcpy(frame, &current->frame, sizeof(TrapFrame));
  pv::ops.return_to_user(frame);
}

[[noreturn]] void schedule() {
  int slot = table.next_runnable(current != nullptr ? current->slot : -1);
  if (slot < 0) panic("no runnable process");
  switch_to(processes[slot]);
  resume_current();
}

const char* process_name(const Process& process, char (&buffer)[16]) {
  if (process.pid == lib::kInitPid) return "init";
  format_to(buffer, sizeof(buffer), "pid %d", process.pid);
  return buffer;
}

// The copy-on-write and demand-zero work of a fault at `address`: false if the access is
// not allowed (the process gets SIGSEGV).
bool resolve_fault(uint64_t address, bool write) {
  Process& process = *current;
  uint64_t page = lib::page_floor(address);
  pv::PageTableSlot slot;
  bool have_slot = process.space.leaf_slot(page, slot);
  PageTableEntry entry = have_slot ? read_entry(slot) : PageTableEntry();
  unsigned references = entry.present() ? page_allocator.references(mfn_to_pfn(entry.mfn())) : 0;
  lib::FaultAction action = lib::fault_action(entry, write, in_demand_region(process, address), references);
  if (action != lib::FaultAction::spurious) process.spurious_faults = 0;
  switch (action) {
    case lib::FaultAction::demand_zero: {
      bool mapped = process.space.map(page, allocate_zeroed_frame(), true);
      pv::ops.flush();  // the page is used right after this: leave lazy (batched) mode
      return mapped;
    }
    case lib::FaultAction::make_writable:
      if (pv::ops.set_entry(slot, lib::private_writable(entry, entry.mfn())) < 0) return false;
      pv::ops.invalidate_page(page);
      return true;
    case lib::FaultAction::copy: {
      Pfn old_frame = mfn_to_pfn(entry.mfn());
      Pfn copy;
      if (!page_allocator.allocate(copy)) panic("out of memory");
      __builtin_memcpy(pfn_pointer<void>(copy), pfn_pointer<void>(old_frame), lib::kPageSize);
      if (pv::ops.set_entry(slot, lib::private_writable(entry, pfn_to_mfn(copy))) < 0) {
        page_allocator.free(copy);
        return false;
      }
      pv::ops.invalidate_page(page);
      page_allocator.free(old_frame);
      return true;
    }
    case lib::FaultAction::spurious:
      // The entry allows the access: a stale translation. Retry a few times, then give up.
      pv::ops.invalidate_page(page);
      return ++process.spurious_faults < 4;
    case lib::FaultAction::segfault: return false;
  }
  return false;
}

void reset_process(Process& process, int slot) {
  int pid = table[slot].pid;
  process = Process{};
  process.slot = slot;
  process.pid = pid;
}

// Staging area for execve: the arguments leave the old address space before it goes.
constexpr size_t kMaxArguments = 256;
char exec_path[256];
char exec_strings[32 * 1024];
const char* exec_argv[kMaxArguments];
const char* exec_envp[kMaxArguments];

// Copies a NULL-terminated vector of user strings; the count, or a negative errno.
long copy_user_vector(uint64_t vector, const char** out, size_t& used) {
  if (vector == 0) return 0;
  for (size_t count = 0;; ++count) {
    if (count == kMaxArguments) return -kE2BIG;
    uint64_t address = vector + count * sizeof(uint64_t);
    if (!user_range_ready(address, sizeof(uint64_t), false)) return -kEFAULT;
    uint64_t string = *reinterpret_cast<const uint64_t*>(address);
    if (string == 0) return static_cast<long>(count);
    if (!copy_user_string(string, exec_strings + used, sizeof(exec_strings) - used)) {
      return -kE2BIG;  // or a fault: both end the exec before anything changed
    }
    out[count] = exec_strings + used;
    while (exec_strings[used] != '\0') ++used;
    ++used;
  }
}

}  // namespace

Process& current_process() { return *current; }
lib::ProcessTable& process_table() { return table; }

bool demand_map(uint64_t address) {
  Process& process = *current;
  if (!in_demand_region(process, address)) return false;
  if (process.space.lookup(lib::page_floor(address)).present()) return true;
  return resolve_fault(address, false);
}

bool user_range_ready(uint64_t address, uint64_t length, bool write) {
  if (length == 0) return true;
  uint64_t end;
  if (__builtin_add_overflow(address, length, &end) || end > kUserLimit) return false;
  for (uint64_t page = lib::page_floor(address); page < end; page += lib::kPageSize) {
    PageTableEntry entry = current->space.lookup(page);
    if (entry.present() && (!write || entry.writable())) continue;
    if (!resolve_fault(page, write)) return false;
  }
  return true;
}

bool copy_user_string(uint64_t address, char* out, uint64_t capacity) {
  for (uint64_t i = 0; i < capacity; ++i) {
    if (i == 0 || ((address + i) & (lib::kPageSize - 1)) == 0) {
      if (!user_range_ready(address + i, 1, false)) return false;
    }
    out[i] = *reinterpret_cast<const char*>(address + i);
    if (out[i] == '\0') return true;
  }
  return false;
}

void release_range(uint64_t start, uint64_t end) {
  for (uint64_t page = lib::page_floor(start); page < end; page += lib::kPageSize) {
    Pfn frame;
    if (current->space.unmap(page, frame)) page_allocator.free(frame);
    // Every page costs the hypervisor trace records (a write and an invlpg, in writable mode
    // an unhook and a rehook too) and 64 MiB make more than the trace buffer holds: drain
    // inside the loop, as Linux would reschedule inside a long unmap.
    trace_capture::poll();
  }
}

void process_run_init(const char* path) {
  int slot = table.create(0);
  Process& process = processes[slot];
  reset_process(process, slot);
  process.space.create();
  static const char* const kEnvironment[] = {"PATH=/bin:/", "HOME=/"};
  // argv: the path, then whatever follows "--" on the kernel command line.
  constexpr size_t kMaxInitArguments = 16;
  static char argument_storage[512];
  const char* argv[kMaxInitArguments + 1] = {path};
  size_t argc = 1 + lib::cmdline_init_args(boot_info.cmdline, argument_storage, sizeof(argument_storage), argv + 1,
                                           kMaxInitArguments);
  UserImage image;
  if (user_find(path, image) < 0 || user_prepare_stack(image, UserArguments{argv, argc, kEnvironment, 2}) < 0) {
    panic("cannot start %s", path);
  }
  user_load(process, image, process.frame);

  if (pv::ops.set_kernel_stack(kernel_stack_top()) < 0) panic("stack_switch failed");
  print("init: starting %s (entry %lx, pte=%s, %lu frames free)\n", path, process.frame.rip,
        pv::pte_mode_name(pv::ops.mode()), page_allocator.free_count());
  switch_to(process);
  resume_current();
}

long process_fork(TrapFrame& frame) {
  int slot = table.create(current->pid);
  if (slot < 0) return -kEAGAIN;
  Process& child = processes[slot];
  reset_process(child, slot);
  child.heap_start = current->heap_start;
  child.heap_end = current->heap_end;
  child.demand = current->demand;
  child.fs_base = current->fs_base;
  child.frame = frame;
  child.frame.rax = 0;  // fork returns 0 in the child
  // One lazy section: in batched mode the child's L4 (made read-only, pinned) and the whole
  // copy go to the hypervisor as a single multicall.
  trace_capture::mark(trace_capture::Operation::fork, uint32_t(child.pid), true);
  {
    pv::LazyMmu lazy;
    child.space.create();
    current->space.copy_into(child.space);
  }
  trace_capture::mark(trace_capture::Operation::fork, uint32_t(child.pid), false);
  return child.pid;
}

long process_execve(TrapFrame& frame, uint64_t path, uint64_t argv, uint64_t envp) {
  if (!copy_user_string(path, exec_path, sizeof(exec_path))) return -kEFAULT;
  size_t used = 0;
  long argc = copy_user_vector(argv, exec_argv, used);
  if (argc < 0) return argc;
  long envc = copy_user_vector(envp, exec_envp, used);
  if (envc < 0) return envc;
  UserImage image;
  long rc = user_find(exec_path, image);
  if (rc < 0) return rc;
  rc = user_prepare_stack(image,
                          UserArguments{exec_argv, static_cast<size_t>(argc), exec_envp, static_cast<size_t>(envc)});
  if (rc < 0) return rc;

  // Point of no return: the old image goes.
  Process& process = *current;
  AddressSpace old = process.space;
  process.space = AddressSpace();
  process.space.create();
  user_load(process, image, frame);
  process.space.activate();
  old.destroy();
  process.fs_base = 0;
  pv::ops.set_user_fs_base(0);
  return 0;
}

void process_exit(int wait_status) {
  Process& dying = *current;
  if (dying.pid == lib::kInitPid) {
    print("pv: %lu page-table entries written, %lu hypercalls (pte=%s)\n", pv::ops.entries_written(),
          pv::ops.hypercalls_issued(), pv::pte_mode_name(pv::ops.mode()));
    print("memory: %lu frames free, %d processes\n", page_allocator.free_count(), table.live_count());
    int status = lib::shell_status(wait_status);
    print("init exited: status %d\n", status);
    trace_capture::finish();
    xen::shutdown(status == 0 ? SHUTDOWN_poweroff : SHUTDOWN_crash);
  }
  int parent = table.exit(dying.slot, wait_status);
  if (parent >= 0 && table[parent].state == ProcessState::blocked) {
    table[parent].state = ProcessState::runnable;
  }
  // Orphans (zombies among them) now belong to init: let it look again.
  int init = table.find(lib::kInitPid);
  if (init >= 0 && table[init].state == ProcessState::blocked) {
    table[init].state = ProcessState::runnable;
  }
  int next = table.next_runnable(dying.slot);
  if (next < 0) panic("no runnable process after pid %d exited", dying.pid);
  switch_to(processes[next]);  // the dying tables must not be in use when they go
  dying.space.destroy();
  resume_current();
}

long process_wait4(TrapFrame& frame, long pid, uint64_t status, uint64_t options, uint64_t rusage) {
  constexpr uint64_t kWnohang = 1;
  constexpr uint64_t kRusageSize = 144;
  if (status != 0 && !user_range_ready(status, sizeof(int), true)) return -kEFAULT;
  if (rusage != 0 && !user_range_ready(rusage, kRusageSize, true)) return -kEFAULT;
  lib::WaitResult result = table.wait(current->slot, static_cast<int>(pid));
  switch (result.kind) {
    case lib::WaitResult::no_children: return -kECHILD;
    case lib::WaitResult::would_block:
      if (options & kWnohang) return 0;
      // Sleep until a child exits, then run the system call again (Linux's restart).
      current->frame = frame;
      current->frame.rip -= kSyscallInstructionLength;
      current->frame.rax = kWait4;
      table[current->slot].state = ProcessState::blocked;
      schedule();
    case lib::WaitResult::reaped: break;
  }
  int child_pid = table[result.slot].pid;
  if (status != 0) {
    int value = table[result.slot].wait_status;
    __builtin_memcpy(reinterpret_cast<void*>(status), &value, sizeof(value));
  }
  if (rusage != 0) __builtin_memset(reinterpret_cast<void*>(rusage), 0, kRusageSize);
  table.release(result.slot);
  reset_process(processes[result.slot], result.slot);
  return child_pid;
}

long process_set_fs_base(uint64_t base) {
  if (pv::ops.set_user_fs_base(base) < 0) return -kEINVAL;
  current->fs_base = base;
  return 0;
}

void user_page_fault(TrapFrame& frame, uint64_t address) {
  constexpr uint64_t kWriteAccess = 2;
  if (resolve_fault(address, frame.error_code & kWriteAccess)) return;
  char name[16];
  print("%s: segmentation fault at 0x%lx (rip 0x%lx, error 0x%lx)\n", process_name(*current, name), address, frame.rip,
        frame.error_code);
  process_exit(lib::wait_status_signaled(kSigsegv));
}

void user_exception(TrapFrame& frame, const char* name) {
  char who[16];
  print("%s: %s at rip 0x%lx (error 0x%lx)\n", process_name(*current, who), name, frame.rip, frame.error_code);
  int signal = kSigsegv;
  switch (frame.vector) {
    case 0: signal = kSigfpe; break;
    case 1:
    case 3: signal = kSigtrap; break;
    case 6: signal = kSigill; break;
    default: break;
  }
  process_exit(lib::wait_status_signaled(signal));
}

}  // namespace kernel
