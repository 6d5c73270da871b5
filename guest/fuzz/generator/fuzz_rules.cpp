// The rules that keep the fuzzer alive (fuzz/generator/fuzz_model.h), checked on a generated operation
// independently of how the generator meant to keep them: the unit tests run this on many
// thousands of operations, and the kernel's fuzz_selfcheck option on every operation it runs.
#include <stddef.h>
#include <stdint.h>
#include <xen/xen.h>
#include <xen/event_channel.h>
#include <xen/sched.h>
#include <xen/vcpu.h>

#include "fuzz/generator/fuzz_entries.h"
#include "fuzz/generator/fuzz_model.h"

namespace lib::fuzz {
namespace {

constexpr uint64_t kPage = 4096;
constexpr uint64_t kHypervisorStart = 0xffff800000000000ull;
constexpr uint64_t kHypervisorEnd = 0xffff880000000000ull;

bool in_range(uint64_t va, uint64_t start, uint64_t size) { return va >= start && va - start < size; }
bool canonical(uint64_t va) { return (va >> 47) == 0 || (va >> 47) == 0x1ffff; }

bool in_fuzz_area(uint64_t va) {
  unsigned slot = unsigned((va >> 39) & 511);
  for (unsigned fuzz : kFuzzL4Slots)
    if (slot == fuzz && (va >> 48) == 0xffff) return true;
  return false;
}

// Addresses where nothing of the guest is readable or writable.
bool unreadable(const Pool& pool, uint64_t va) {
  if (va < kPage * 16) return true;
  if (va < 0x0000800000000000ull) return true;  // user half: the kernel's tables map none of it while fuzzing
  if (!canonical(va)) return true;
  if (va >= kHypervisorStart && va < kHypervisorEnd) return true;
  // The kernel's L4 links only its own slot and the fuzz slots while fuzzing, and the fuzzer
  // writes no slot of the kernel's own (the unmapped page and the edge page's hole stay so).
  unsigned slot = unsigned((va >> 39) & 511);
  if (slot != kKernelL4Slot && !in_fuzz_area(va)) return true;
  if (in_range(va, pool.unmapped_va, kPage)) return true;
  if (in_range(va, pool.edge_va + kPage, kPage)) return true;
  return false;
}

// Where the hypervisor may write for the fuzzer: the operation's buffers, read-only pages of
// scratch tables and of the window (writes must fail), or nowhere at all. Never the kernel,
// never the fuzzed range.
bool safe_write_pointer(const Pool& pool, uint64_t va) {
  if (unreadable(pool, va)) return true;
  if (in_range(va, pool.buffer_va, pool.buffer_size) || in_range(va, pool.edge_va, kPage)) return true;
  if (in_range(va, pool.read_only_va, kPage)) return true;
  for (unsigned i = 0; i < pool.table_count; ++i)
    if (in_range(va, pool.table_va[i], kPage)) return true;
  return false;
}

// The guest memory a pointer designates, if it is one of the operation's buffers (null otherwise).
const uint8_t* buffer_bytes(const Pool& pool, uint64_t va, uint64_t bytes) {
  if (in_range(va, pool.buffer_va, pool.buffer_size) && va - pool.buffer_va + bytes <= pool.buffer_size)
    return pool.buffer + (va - pool.buffer_va);
  if (in_range(va, pool.edge_va, kPage) && va - pool.edge_va + bytes <= kPage) return pool.edge + (va - pool.edge_va);
  return nullptr;
}

const ProtectedSlot* protected_slot_at(const Pool& pool, uint64_t machine_address) {
  for (unsigned i = 0; i < pool.protected_slot_count; ++i)
    if (pool.protected_slots[i].machine_address == machine_address) return &pool.protected_slots[i];
  return nullptr;
}
const OtherFrame* protected_frame_of(const Pool& pool, uint64_t mfn) {
  for (unsigned i = 0; i < pool.protected_frame_count; ++i)
    if (pool.protected_frames[i].mfn == mfn) return &pool.protected_frames[i];
  return nullptr;
}
int table_index_of(const Pool& pool, uint64_t mfn) {
  for (unsigned i = 0; i < pool.table_count; ++i)
    if (pool.table_mfn[i] == mfn) return int(i);
  return -1;
}
bool is_clone(const Pool& pool, uint64_t mfn) {
  int index = table_index_of(pool, mfn);
  return index >= 0 && unsigned(index) < pool.clone_count;
}
bool is_data(const Pool& pool, uint64_t mfn) {
  for (unsigned i = 0; i < pool.data_count; ++i)
    if (pool.data_mfn[i] == mfn) return true;
  return false;
}

// A value a protected slot may be given: the one it holds, or one the hypervisor must refuse.
bool refused_or_same(const ProtectedSlot& slot, uint64_t value) {
  if (value == slot.value) return true;
  unsigned index = unsigned((slot.machine_address & (kPage - 1)) / 8);
  if (slot.level == 4 && index >= kFirstHypervisorSlot && index <= kLastHypervisorSlot) return true;
  if (!(value & kPresentBit)) return false;  // a not-present entry may hold anything: accepted
  uint64_t changed = (value ^ slot.value) & ~kPresentBit;
  if ((value & 0x000fff0000000000ull) && !(changed & ~0x000fff0000000000ull)) return true;  // beyond the physical width
  if (slot.level == 1 && slot.maps_table && changed == kWritableBit) return true;           // a table writable
  if (slot.level > 1 && changed == kLargeBit) return true;                                  // a superpage
  return false;
}

// The direct-map slot of a scratch table (its mapping must stay read-only).
bool is_table_direct_map_slot(const Pool& pool, uint64_t machine_address) {
  for (unsigned i = 0; i < pool.table_count; ++i)
    if (pool.direct_map_slot_ma[i] == machine_address) return true;
  return false;
}

const char* check_entry_write(const Pool& pool, uint64_t machine_address, uint64_t value) {
  if (is_scratch_table_slot(pool, machine_address)) {
    if (!entry_safe(pool, value)) return "a writable entry naming one of our protected frames";
    if (is_table_direct_map_slot(pool, machine_address) && (value & kWritableBit))
      return "a scratch table's direct-map mapping made writable";
    return "";
  }
  if (const ProtectedSlot* slot = protected_slot_at(pool, machine_address)) {
    return refused_or_same(*slot, value) ? "" : "a protected slot given a value that could be accepted";
  }
  if (is_own_frame(pool, machine_address >> 12)) return "a write into one of our frames outside the scratch set";
  return "";
}

const char* check_mmu_update(const Pool& pool, const uint64_t* args) {
  if (!safe_write_pointer(pool, args[2])) return "mmu_update's done pointer";
  uint64_t count = args[1];
  for (uint64_t i = 0; i < count && i < 4096; ++i) {
    const uint8_t* bytes = buffer_bytes(pool, args[0] + i * sizeof(mmu_update_t), sizeof(mmu_update_t));
    if (!bytes) {
      if (i == 0 && !unreadable(pool, args[0]) && !in_range(args[0], pool.edge_va, 2 * kPage))
        return "mmu_update's list outside the operation's buffers";
      break;
    }
    mmu_update_t request;
    __builtin_memcpy(&request, bytes, sizeof(request));
    uint64_t command = request.ptr & 7;
    uint64_t address = request.ptr & ~7ull;
    if (command == MMU_MACHPHYS_UPDATE) {
      uint64_t mfn = address >> 12;
      if (is_own_frame(pool, mfn) && !is_scratch_frame(pool, mfn)) return "an M2P update of a protected frame";
    } else if (command <= MMU_PT_UPDATE_NO_TRANSLATE) {
      if (const char* problem = check_entry_write(pool, address, request.val); *problem) return problem;
    }
  }
  return "";
}

const char* check_mmuext(const Pool& pool, const mmuext_op_t& op, uint32_t restore) {
  uint64_t mfn = op.arg1.mfn;
  const OtherFrame* frame = protected_frame_of(pool, mfn);
  switch (op.cmd) {
    case MMUEXT_PIN_L1_TABLE:
    case MMUEXT_PIN_L2_TABLE:
    case MMUEXT_PIN_L3_TABLE:
    case MMUEXT_PIN_L4_TABLE:
      if (is_read_only_frame(pool, mfn)) return "a pin of a frame mapped read-only only (its contents validated)";
      if (frame && frame->level == op.cmd - MMUEXT_PIN_L1_TABLE + 1) return "a pin of a protected table at its level";
      if (!frame && is_own_frame(pool, mfn) && !is_scratch_frame(pool, mfn))
        return "a pin of an unlisted frame of ours";
      return "";
    case MMUEXT_UNPIN_TABLE:
      if (is_clone(pool, mfn)) return "an unpin of a clone of the kernel L4";
      if (is_own_frame(pool, mfn) && !is_scratch_frame(pool, mfn)) return "an unpin of a protected frame";
      return "";
    case MMUEXT_NEW_BASEPTR:
      if (!(restore & kRestoreBase)) return "a base switch without kRestoreBase";
      if (mfn == pool.kernel_l4_mfn || is_clone(pool, mfn)) return "";
      if (is_scratch_frame(pool, mfn)) return "a base switch to a scratch frame";
      if (frame && frame->level == 4) return "a base switch to a protected L4";
      if (is_read_only_frame(pool, mfn))
        return "a base switch to a frame mapped read-only only (its contents validated)";
      if (is_own_frame(pool, mfn) && !frame) return "a base switch to an unlisted frame of ours";
      return "";
    case MMUEXT_NEW_USER_BASEPTR:
      if (pool.vcpus > 1 && mfn == pool.kernel_l4_mfn) return "the kernel L4 as a user base beside other vCPUs";
      return is_read_only_frame(pool, mfn) ? "a user base on a frame mapped read-only only (its contents validated)"
                                           : "";
    case MMUEXT_CLEAR_PAGE:
    case MMUEXT_COPY_PAGE:
      if (is_clone(pool, mfn)) return "a clone of the kernel L4 cleared or overwritten";
      if (frame && frame->level == 0) return "a protected frame cleared or overwritten";
      if (is_own_frame(pool, mfn) && !is_scratch_frame(pool, mfn) && !frame)
        return "an unlisted frame of ours overwritten";
      if (op.cmd == MMUEXT_COPY_PAGE && is_own_frame(pool, op.arg2.src_mfn) && !is_scratch_frame(pool, op.arg2.src_mfn))
        return "a copy from a protected frame";
      return "";
    case MMUEXT_SET_LDT: return (restore & kRestoreLdt) ? "" : "an LDT without kRestoreLdt";
    default: return "";
  }
}

const char* check_mmuext_op(const Pool& pool, const uint64_t* args, uint32_t restore) {
  if (!safe_write_pointer(pool, args[2])) return "mmuext_op's done pointer";
  for (uint64_t i = 0; i < args[1] && i < 4096; ++i) {
    const uint8_t* bytes = buffer_bytes(pool, args[0] + i * sizeof(mmuext_op_t), sizeof(mmuext_op_t));
    if (!bytes) {
      if (i == 0 && !unreadable(pool, args[0]) && !in_range(args[0], pool.edge_va, 2 * kPage))
        return "mmuext_op's list outside the operation's buffers";
      break;
    }
    mmuext_op_t op;
    __builtin_memcpy(&op, bytes, sizeof(op));
    if (const char* problem = check_mmuext(pool, op, restore); *problem) return problem;
  }
  return "";
}

// No L1 can exist for it while fuzzing: outside the kernel's slot and the fuzz slots, or in
// the kernel's 2 MiB with no L1.
bool untabled(const Pool& pool, uint64_t va) {
  if (va < 0x0000800000000000ull || !canonical(va)) return true;
  if (va >= kHypervisorStart && va < kHypervisorEnd) return true;
  unsigned slot = unsigned((va >> 39) & 511);
  if (slot != kKernelL4Slot && !in_fuzz_area(va)) return true;
  return in_range(va, pool.unmapped_va & ~((2ull << 20) - 1), 2ull << 20);
}

const char* check_va_mapping(const Pool& pool, const uint64_t* args, unsigned depth) {
  uint64_t va = args[0] & ~(kPage - 1);
  uint64_t value = args[1];
  if (depth > 0 && in_fuzz_area(va)) return "a batched update_va_mapping through the fuzzed range";
  if (in_fuzz_area(va) || untabled(pool, va))
    return entry_safe(pool, value) ? "" : "a fuzzed address mapped writable to a protected frame";
  for (unsigned i = 0; i < pool.table_count; ++i)
    if (pool.table_va[i] == va) return (value & kWritableBit) ? "a scratch table mapped writable" : "";
  for (unsigned i = 0; i < pool.data_count; ++i)
    if (pool.data_va[i] == va)
      return entry_safe(pool, value) ? "" : "a data frame's address mapped to a protected frame";
  for (unsigned i = 0; i < pool.protected_slot_count; ++i) {
    const ProtectedSlot& slot = pool.protected_slots[i];
    if (slot.level == 1 && slot.va == va)
      return refused_or_same(slot, value) ? "" : "a kernel address given a new mapping";
  }
  return "update_va_mapping of a kernel address";
}

bool is_block_call(uint64_t number, uint64_t command_arg) {
  uint32_t low = uint32_t(number), cmd = uint32_t(command_arg);
  return (low == __HYPERVISOR_sched_op || low == __HYPERVISOR_sched_op_compat) && cmd == SCHEDOP_block;
}

const char* check_call(const Pool& pool, const Op& op, const uint64_t* args, uint64_t number, unsigned depth,
                       uint64_t list_va);

const char* check_multicall(const Pool& pool, const Op& op, const uint64_t* args, unsigned depth) {
  if (depth > 3) return "";
  for (uint64_t i = 0; i < args[1] && i < 4096; ++i) {
    const uint8_t* bytes = buffer_bytes(pool, args[0] + i * sizeof(multicall_entry_t), sizeof(multicall_entry_t));
    if (!bytes) {
      if (i == 0 && !unreadable(pool, args[0]) && !in_range(args[0], pool.edge_va, 2 * kPage))
        return "a multicall list outside the operation's buffers";
      break;
    }
    multicall_entry_t entry;
    __builtin_memcpy(&entry, bytes, sizeof(entry));
    uint32_t low = uint32_t(entry.op);
    if (low == __HYPERVISOR_iret) {  // Xen runs it, on the context at the caller's stack pointer
      if (!op.iret_frame) return "an iret in a batch with no iret context prepared";
      continue;
    }
    if (low == __HYPERVISOR_multicall && entry.args[0] == args[0]) continue;  // itself: checked here
    uint64_t entry_args[6];
    for (unsigned a = 0; a < 6; ++a) entry_args[a] = entry.args[a];
    if (const char* problem = check_call(pool, op, entry_args, entry.op, depth + 1, args[0]); *problem) return problem;
  }
  return "";
}

const char* check_call(const Pool& pool, const Op& op, const uint64_t* args, uint64_t number, unsigned depth,
                       uint64_t) {
  uint32_t low = uint32_t(number);
  uint32_t cmd = uint32_t(args[0]);
  const uint32_t restore = op.restore;
  if (is_block_call(number, args[0]) && !op.arm_timer) return "a block with no timer armed";
  if (is_block_call(number, args[0]) && depth > 0) return "a block inside a batch (the timer may have moved)";
  switch (low) {
    case __HYPERVISOR_set_trap_table: return (restore & kRestoreTraps) ? "" : "set_trap_table without kRestoreTraps";
    case __HYPERVISOR_mmu_update: return check_mmu_update(pool, args);
    case __HYPERVISOR_mmuext_op: return check_mmuext_op(pool, args, restore);
    case __HYPERVISOR_update_va_mapping:
    case __HYPERVISOR_update_va_mapping_otherdomain: return check_va_mapping(pool, args, depth);
    case __HYPERVISOR_multicall: return check_multicall(pool, op, args, depth);
    case __HYPERVISOR_iret: return depth == 0 ? "an iret outside the iret class" : "";
    case __HYPERVISOR_set_callbacks:
    case __HYPERVISOR_callback_op:
      return (restore & kRestoreCallbacks) ? "" : "callbacks changed without kRestoreCallbacks";
    case __HYPERVISOR_fpu_taskswitch: return (restore & kRestoreFpu) ? "" : "fpu_taskswitch without kRestoreFpu";
    case __HYPERVISOR_vm_assist:
      return (restore & kRestoreVmAssist) && (restore & kRestoreBase) ? "" : "vm_assist without its restores";
    case __HYPERVISOR_set_segment_base:
      return (restore & kRestoreSegments) ? "" : "segment base without kRestoreSegments";
    case __HYPERVISOR_sched_op_compat:
      return cmd == SCHEDOP_shutdown || cmd == SCHEDOP_remote_shutdown ? "a compat shutdown" : "";
    case __HYPERVISOR_sched_op: {
      uint64_t pointer = args[1];
      const uint8_t* bytes = buffer_bytes(pool, pointer, 16);
      switch (cmd) {
        case SCHEDOP_shutdown: return unreadable(pool, pointer) ? "" : "a shutdown whose reason can be read";
        case SCHEDOP_remote_shutdown: {
          if (!bytes) return unreadable(pool, pointer) ? "" : "a remote shutdown from unknown memory";
          sched_remote_shutdown_t remote;
          __builtin_memcpy(&remote, bytes, sizeof(remote));
          bool ours = remote.domain_id == DOMID_SELF || remote.domain_id == pool.domid || remote.domain_id < 2;
          return ours ? "a remote shutdown of ourselves or a running domain" : "";
        }
        case SCHEDOP_watchdog: {
          if (!bytes) return unreadable(pool, pointer) ? "" : "a watchdog from unknown memory";
          sched_watchdog_t watchdog;
          __builtin_memcpy(&watchdog, bytes, sizeof(watchdog));
          return watchdog.id == 0 || watchdog.timeout != 0 ? "a watchdog that could fire" : "";
        }
        case SCHEDOP_poll: {
          if (!bytes) return unreadable(pool, pointer) ? "" : "a poll from unknown memory";
          sched_poll_t poll;
          __builtin_memcpy(&poll, bytes, sizeof(poll));
          return poll.timeout == 0 || poll.timeout > 1000000 ? "a poll that could wait" : "";
        }
        case SCHEDOP_shutdown_code:
          return unreadable(pool, pointer) ? "" : "a shutdown code that can be read (Xen keeps the first one)";
        default: return "";
      }
    }
    case __HYPERVISOR_vcpu_op: {
      uint32_t vcpu = uint32_t(args[1]);
      if (cmd == VCPUOP_down && vcpu == 0) return "our vCPU taken down";
      if (cmd == VCPUOP_down && vcpu < pool.vcpus) return "a vCPU running a stream taken down";
      if ((cmd == VCPUOP_register_runstate_memory_area || cmd == VCPUOP_register_vcpu_time_memory_area) && vcpu != 0 &&
          vcpu < pool.vcpus)
        return "an area registered for another vCPU (never put back)";
      if (cmd == VCPUOP_register_vcpu_info) return "vcpu_info moved";
      if ((cmd == VCPUOP_register_runstate_memory_area || cmd == VCPUOP_register_vcpu_time_memory_area) &&
          (!safe_write_pointer(pool, args[2]) || !(restore & kRestoreVcpuAreas)))
        return "a vCPU area the hypervisor keeps writing";
      return "";
    }
    case __HYPERVISOR_event_channel_op: {
      const uint8_t* bytes = buffer_bytes(pool, args[1], 8);
      if (cmd == EVTCHNOP_init_control) return "the FIFO event channel ABI";
      if (cmd == EVTCHNOP_close || cmd == EVTCHNOP_reset || cmd == EVTCHNOP_bind_vcpu) {
        if (!bytes) return unreadable(pool, args[1]) ? "" : "an event channel op from unknown memory";
        uint32_t word;
        __builtin_memcpy(&word, bytes, 4);
        if (cmd == EVTCHNOP_reset) {
          uint16_t dom = uint16_t(word);
          return dom == DOMID_SELF || dom == pool.domid ? "a reset of our event channels" : "";
        }
        for (unsigned i = 0; i < pool.protected_port_count; ++i) {
          if (pool.protected_ports[i] != word) continue;
          if (cmd == EVTCHNOP_close) return "a kernel event channel closed";
          if (pool.vcpus > 1) return "a kernel event channel moved (several vCPUs: each has its own)";
          uint32_t vcpu;
          __builtin_memcpy(&vcpu, bytes + 4, 4);
          if (vcpu != 0) return "a kernel event channel moved to another vCPU";
        }
      }
      return "";
    }
    case __HYPERVISOR_event_channel_op_compat: {
      const uint8_t* bytes = buffer_bytes(pool, args[0], 4);
      if (!bytes) return unreadable(pool, args[0]) ? "" : "an event channel op from unknown memory";
      uint32_t compat;
      __builtin_memcpy(&compat, bytes, 4);
      return compat == EVTCHNOP_close || compat == EVTCHNOP_reset || compat == EVTCHNOP_init_control
                 ? "a compat event channel op that could close ours"
                 : "";
    }
    case __HYPERVISOR_memory_op: {
      static const unsigned kChanging[] = {0, 1, 6, 7, 11, 15, 16, 20, 21, 22, 23, 24, 28};
      for (unsigned changing : kChanging)
        if ((args[0] & 0x3f) == changing) return "a memory_op that changes our memory";
      return "";
    }
    case __HYPERVISOR_kexec_op: return cmd == 0 || cmd == 1 || cmd == 4 ? "kexec or a kexec load" : "";
    case __HYPERVISOR_console_io: {
      if (cmd != CONSOLEIO_write) return "";
      uint64_t length = args[1], pointer = args[2];
      if (unreadable(pool, pointer) || in_range(pointer, pool.edge_va, kPage)) return "";
      if (in_range(pointer, pool.text_va, pool.text_size))
        return pointer + length <= pool.text_va + pool.text_size ? "" : "console text overrun";
      if (in_fuzz_area(pointer)) return length <= 64 ? "" : "a long console write from the fuzzed range";
      return "a console write from unknown memory";
    }
    case __HYPERVISOR_physdev_op:
    case __HYPERVISOR_physdev_op_compat: return (restore & kRestoreIopl) ? "" : "physdev_op without kRestoreIopl";
    case __HYPERVISOR_set_timer_op: return (restore & kRestoreTimers) ? "" : "a timer without kRestoreTimers";
    default: return "";
  }
}

const char* check_iret_frame(const IretFrame& frame) {
  if ((frame.cs & 3) == 3) return "an iret to user mode";
  if ((frame.cs | 3) == 0xe023) return "an iret to 32-bit code";
  if (frame.rsp != IretFrame::Rsp::landing_stack && frame.rsp != IretFrame::Rsp::misaligned &&
      ((frame.rflags & (kIfFlag | kTfFlag)) || frame.rip != IretFrame::Rip::landing))
    return "an iret to a bad stack that something would need";
  return "";
}

}  // namespace

bool is_scratch_frame(const Pool& pool, uint64_t mfn) { return table_index_of(pool, mfn) >= 0 || is_data(pool, mfn); }

bool is_own_frame(const Pool& pool, uint64_t mfn) {
  if (mfn == pool.shared_info_mfn) return true;
  for (unsigned i = 0; i < pool.kernel_text_run_count; ++i)
    if (pool.kernel_text[i].contains(mfn)) return true;
  for (unsigned i = 0; i < pool.own_run_count; ++i)
    if (pool.own_runs[i].contains(mfn)) return true;
  return is_scratch_frame(pool, mfn) || protected_frame_of(pool, mfn) != nullptr;
}

bool is_scratch_table_slot(const Pool& pool, uint64_t machine_address) {
  if (machine_address & 7) return false;
  for (uint64_t slot : pool.fuzz_slot_ma)
    if (slot == machine_address) return true;
  for (unsigned i = 0; i < pool.table_count; ++i)
    if (pool.direct_map_slot_ma[i] == machine_address) return true;
  for (unsigned i = 0; i < pool.data_count; ++i)
    if (pool.direct_map_slot_ma[kMaxTables + i] == machine_address) return true;
  int table = table_index_of(pool, machine_address >> 12);
  if (table < 0) return false;
  unsigned index = unsigned((machine_address & (kPage - 1)) / 8);
  return !(unsigned(table) < pool.clone_count && index == kKernelL4Slot);
}

bool is_read_only_frame(const Pool& pool, uint64_t mfn) {
  for (unsigned i = 0; i < pool.kernel_text_run_count; ++i)
    if (pool.kernel_text[i].contains(mfn)) return true;
  const OtherFrame* frame = protected_frame_of(pool, mfn);
  return frame != nullptr && frame->read_only;
}

bool entry_safe(const Pool& pool, uint64_t value) {
  uint64_t mfn = (value & kAddressBits) >> 12;
  if (is_read_only_frame(pool, mfn)) return false;
  if (!(value & kWritableBit)) return true;
  return !is_own_frame(pool, mfn) || is_scratch_frame(pool, mfn);
}

uint64_t sanitize_entry(const Pool& pool, uint64_t value) {
  // Frame 0 instead of a frame mapped read-only only (never ours: refused before any
  // validation), read-only as any entry naming our frames.
  if (is_read_only_frame(pool, (value & kAddressBits) >> 12)) return value & ~kAddressBits & ~kWritableBit;
  return entry_safe(pool, value) ? value : value & ~kWritableBit;
}

bool hypervisor_owned_port(uint16_t port) {
  return (port >= 0x3f8 && port <= 0x3ff) || port == 0x20 || port == 0x21 || port == 0xa0 || port == 0xa1 ||
         (port >= 0x40 && port <= 0x43) || port == 0x61 || port == 0x70 || port == 0x71 ||
         (port >= 0xf4 && port <= 0xf7);
}

unsigned store_span(const Step& step) {
  if (step.store == StoreKind::misaligned) return 2;
  if (step.store == StoreKind::rep_stos) return step.operand >= 1 && step.operand <= 8 ? unsigned(step.operand) : 1;
  return 1;
}

unsigned store_result(const Step& step, const uint64_t* current, uint64_t* result) {
  unsigned span = store_span(step);
  for (unsigned i = 0; i < span; ++i) result[i] = current[i];
  uint64_t old = current[0];
  switch (step.store) {
    case StoreKind::mov64:
    case StoreKind::xchg:
    case StoreKind::movnti: result[0] = step.value; break;
    case StoreKind::mov32_low: result[0] = (old & ~0xffffffffull) | (step.value & 0xffffffffull); break;
    case StoreKind::mov32_high: result[0] = (old & 0xffffffffull) | (step.value & ~0xffffffffull); break;
    case StoreKind::mov16: result[0] = (old & ~0xffffull) | (step.value & 0xffffull); break;
    case StoreKind::mov8: result[0] = (old & ~0xffull) | (step.value & 0xffull); break;
    case StoreKind::cmpxchg: {
      uint64_t expected = step.operand == kUseCurrent ? old : step.operand;
      if (old == expected) result[0] = step.value;
      break;
    }
    case StoreKind::or64: result[0] = old | step.operand; break;
    case StoreKind::and64: result[0] = old & step.operand; break;
    case StoreKind::bts: result[0] = old | (1ull << (step.operand & 63)); break;
    case StoreKind::btr: result[0] = old & ~(1ull << (step.operand & 63)); break;
    case StoreKind::misaligned: {
      unsigned shift = unsigned(step.operand & 7) * 8;
      if (shift == 0) {
        result[0] = step.value;
        break;
      }
      uint64_t low_mask = (1ull << shift) - 1;
      result[0] = (old & low_mask) | (step.value << shift);
      result[1] = (current[1] & ~low_mask) | (step.value >> (64 - shift));
      break;
    }
    case StoreKind::rep_stos:
      for (unsigned i = 0; i < span; ++i) result[i] = step.value;
      break;
  }
  return span;
}

const char* check_rules(const Pool& pool, const Op& op) {
  switch (op.kind) {
    case OpKind::call:
    case OpKind::mmu:
    case OpKind::mmuext:
    case OpKind::va_mapping:
    case OpKind::multicall:
    case OpKind::rflags:
    case OpKind::sched: {
      const char* problem = check_call(pool, op, op.call.args, op.call.number, 0, 0);
      if (*problem) return problem;
      constexpr uint32_t kHandlers = kRestoreTraps | kRestoreCallbacks | kRestoreNmi;
      if (op.kind == OpKind::rflags && (op.rflags & kTfFlag) && (op.restore & kHandlers))
        return "a single-step trap with the handlers replaced";
      if (!op.iret_frame) return "";
      if (op.restore & kHandlers) return "an iret in a batch that replaces the handlers";
      return check_iret_frame(op.iret);
    }
    case OpKind::ptwrite:
    case OpKind::touch:
      for (unsigned i = 0; i < op.step_count && i < kMaxSteps; ++i) {
        const Step& step = op.steps[i];
        if (step.kind == Step::Kind::touch_store && !entry_safe(pool, step.value))
          return "a touch store of an unsafe entry";
        if (step.kind != Step::Kind::store) continue;
        bool kernel_l4 = step.table == kKernelL4Table;
        if (!kernel_l4 && step.table >= pool.table_count) return "a store into no scratch table";
        uint64_t table_mfn = kernel_l4 ? pool.kernel_l4_mfn : pool.table_mfn[step.table];
        for (unsigned s = 0; s < store_span(step); ++s) {
          uint64_t ma = table_mfn * kPage + uint64_t(step.slot + s) * 8;
          if (step.slot + s >= 512) return "a store past the end of a table";
          if (kernel_l4 ? (ma != pool.fuzz_slot_ma[0] && ma != pool.fuzz_slot_ma[1]) : !is_scratch_table_slot(pool, ma))
            return "a store into a protected slot";
        }
        bool full = step.store == StoreKind::mov64 || step.store == StoreKind::xchg ||
                    step.store == StoreKind::movnti || step.store == StoreKind::cmpxchg ||
                    step.store == StoreKind::rep_stos;
        if (full && !entry_safe(pool, step.value)) return "a store of an unsafe entry";
        if (step.store == StoreKind::or64 && (step.operand & ~kSettableFlags))
          return "an or that sets RW or address bits";
        if (step.store == StoreKind::and64 && (~step.operand & ~kClearableFlags))
          return "an and that clears address bits";
        if (step.store == StoreKind::bts && (((kSettableFlags >> (step.operand & 63)) & 1) == 0 || step.operand > 63))
          return "a bts of RW or an address bit";
        if (step.store == StoreKind::btr && (((kClearableFlags >> (step.operand & 63)) & 1) == 0 || step.operand > 63))
          return "a btr of an address bit";
      }
      return "";
    case OpKind::iret: return check_iret_frame(op.iret);
    case OpKind::ports:
      if (pool.privileged && op.port.out) {
        for (unsigned i = 0; i < op.port.width; ++i)
          if (!hypervisor_owned_port(uint16_t(op.port.port + i))) return "dom0 writing a device port";
      }
      return "";
    case OpKind::hv_frames: return check_hv_frames(pool, op);
    case OpKind::destroy: return check_destroy(pool, op);
    case OpKind::insn:
      if (op.insn.kind == InsnKind::mov_cr3) {
        uint64_t mfn = op.insn.rax >> 12;
        if (mfn != pool.kernel_l4_mfn && is_scratch_frame(pool, mfn)) return "mov cr3 to a scratch frame";
      }
      if (op.insn.kind == InsnKind::hlt && !op.arm_timer) return "hlt with no timer armed";
      return "";
  }
  return "";
}

}  // namespace lib::fuzz
