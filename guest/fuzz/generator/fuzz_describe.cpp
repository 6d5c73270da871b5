// Text of a generated operation (fuzz_log=<from>-<to>): enough to rebuild it by hand in a
// self-test, decoded from the operation's buffers. Pure.
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <xen/xen.h>

#include "common/format.h"
#include "fuzz/generator/fuzz_model.h"

namespace lib::fuzz {
namespace {

constexpr uint64_t kPage = 4096;

class Text {
 public:
  Text(char* buffer, size_t capacity) : buffer_(buffer), capacity_(capacity) {
    if (capacity_) buffer_[0] = 0;
  }
  void add(const char* fmt, ...) __attribute__((format(printf, 2, 3))) {
    if (length_ + 1 >= capacity_) return;
    va_list args;
    va_start(args, fmt);
    size_t n = format_to(buffer_ + length_, capacity_ - length_, fmt, args);
    va_end(args);
    length_ += n < capacity_ - length_ ? n : capacity_ - length_ - 1;
  }
  size_t length() const { return length_; }

 private:
  char* buffer_;
  size_t capacity_;
  size_t length_ = 0;
};

const char* indent(unsigned depth) { return depth == 0 ? "" : depth == 1 ? "  " : "    "; }

const uint8_t* bytes_at(const Pool& pool, uint64_t va, uint64_t size) {
  if (va >= pool.buffer_va && va - pool.buffer_va + size <= pool.buffer_size)
    return pool.buffer + (va - pool.buffer_va);
  if (va >= pool.edge_va && va - pool.edge_va + size <= kPage) return pool.edge + (va - pool.edge_va);
  return nullptr;
}

void describe_call(const Pool& pool, Text& text, uint64_t number, const uint64_t* args, unsigned depth) {
  text.add("hypercall 0x%lx(0x%lx, 0x%lx, 0x%lx, 0x%lx, 0x%lx)", number, args[0], args[1], args[2], args[3], args[4]);
  uint32_t low = uint32_t(number);
  uint64_t shown = args[1] < 32 ? args[1] : 32;
  if (low == __HYPERVISOR_mmu_update) {
    for (uint64_t i = 0; i < shown; ++i) {
      const uint8_t* at = bytes_at(pool, args[0] + i * sizeof(mmu_update_t), sizeof(mmu_update_t));
      if (!at) break;
      mmu_update_t request;
      __builtin_memcpy(&request, at, sizeof(request));
      text.add("\n  %s[%lu] ptr 0x%lx val 0x%lx", indent(depth), i, request.ptr, request.val);
    }
  } else if (low == __HYPERVISOR_mmuext_op) {
    for (uint64_t i = 0; i < shown; ++i) {
      const uint8_t* at = bytes_at(pool, args[0] + i * sizeof(mmuext_op_t), sizeof(mmuext_op_t));
      if (!at) break;
      mmuext_op_t op;
      __builtin_memcpy(&op, at, sizeof(op));
      text.add("\n  %s[%lu] cmd %u arg1 0x%lx arg2 0x%lx", indent(depth), i, op.cmd, op.arg1.mfn,
               uint64_t(op.arg2.src_mfn));
    }
  } else if (low == __HYPERVISOR_multicall && depth < 2) {
    for (uint64_t i = 0; i < shown; ++i) {
      const uint8_t* at = bytes_at(pool, args[0] + i * sizeof(multicall_entry_t), sizeof(multicall_entry_t));
      if (!at) break;
      multicall_entry_t entry;
      __builtin_memcpy(&entry, at, sizeof(entry));
      text.add("\n  %s{%lu} ", indent(depth), i);
      uint64_t entry_args[6];
      for (unsigned a = 0; a < 6; ++a) entry_args[a] = entry.args[a];
      if (uint32_t(entry.op) == __HYPERVISOR_multicall && entry.args[0] == args[0])
        text.add("hypercall 0x%lx(itself, 0x%lx): the multicall's own list", entry.op, entry.args[1]);
      else
        describe_call(pool, text, entry.op, entry_args, depth + 1);
    }
  }
}

const char* store_name(StoreKind kind) {
  static const char* const kNames[] = {"mov64", "mov32_low", "mov32_high", "mov16", "mov8",       "xchg",     "cmpxchg",
                                       "or",    "and",       "bts",        "btr",   "misaligned", "rep_stos", "movnti"};
  return unsigned(kind) < sizeof(kNames) / sizeof(kNames[0]) ? kNames[unsigned(kind)] : "?";
}

}  // namespace

size_t describe(const Pool& pool, const Op& op, char* buffer, size_t capacity) {
  Text text(buffer, capacity);
  text.add("%s", op_kind_name(op.kind));
  if (op.restore) text.add(" restore 0x%x", op.restore);
  if (op.arm_timer) text.add(" timer +%lu ns", op.arm_timer_ns);
  switch (op.kind) {
    case OpKind::rflags:
      text.add(" rflags 0x%lx ", op.rflags);
      describe_call(pool, text, op.call.number, op.call.args, 0);
      break;
    case OpKind::call:
    case OpKind::mmu:
    case OpKind::mmuext:
    case OpKind::va_mapping:
    case OpKind::multicall:
    case OpKind::sched:
      text.add(" ");
      describe_call(pool, text, op.call.number, op.call.args, 0);
      if (op.iret_frame)
        text.add(
            "\n  with the stack at an iret context: rax 0x%lx flags 0x%lx cs 0x%lx rflags 0x%lx ss 0x%lx rip-kind %u "
            "rsp-kind %u",
            op.iret.rax, op.iret.flags, op.iret.cs, op.iret.rflags, op.iret.ss, unsigned(op.iret.rip),
            unsigned(op.iret.rsp));
      break;
    case OpKind::ptwrite:
    case OpKind::touch:
      for (unsigned i = 0; i < op.step_count && i < kMaxSteps; ++i) {
        const Step& step = op.steps[i];
        switch (step.kind) {
          case Step::Kind::store: {
            static const char* const kPaths[] = {"direct", "alias", "alias-holder"};
            text.add("\n  store %s %s", store_name(step.store), kPaths[unsigned(step.path) % 3]);
            if (step.path != StorePath::direct_map) text.add(" %u", step.alias);
            text.add(" table %u slot %u value 0x%lx operand 0x%lx", step.table, step.slot, step.value, step.operand);
            break;
          }
          case Step::Kind::alias_load: text.add("\n  load through alias %u of table %u", step.alias, step.table); break;
          case Step::Kind::load: text.add("\n  load 0x%lx", step.va); break;
          case Step::Kind::touch_store: text.add("\n  touch store 0x%lx = 0x%lx", step.va, step.value); break;
          case Step::Kind::settle: text.add("\n  settle"); break;
          case Step::Kind::rebuild: text.add("\n  rebuild the initial tables"); break;
        }
      }
      break;
    case OpKind::iret:
      text.add(" rax 0x%lx number 0x%lx flags 0x%lx cs 0x%lx rflags 0x%lx ss 0x%lx rip-kind %u rsp-kind %u",
               op.iret.rax, op.iret.number, op.iret.flags, op.iret.cs, op.iret.rflags, op.iret.ss,
               unsigned(op.iret.rip), unsigned(op.iret.rsp));
      break;
    case OpKind::ports:
      text.add(" %s%s port 0x%x width %u value 0x%x count %lu iopl %u", op.port.out ? "out" : "in",
               op.port.string ? "s" : "", op.port.port, op.port.width, op.port.value, op.port.count, op.port.iopl);
      break;
    case OpKind::insn:
      text.add(" kind %u vector 0x%x rax 0x%lx rcx 0x%lx rdx 0x%lx", unsigned(op.insn.kind), op.insn.vector,
               op.insn.rax, op.insn.rcx, op.insn.rdx);
      break;
    case OpKind::hv_frames:
      for (unsigned i = 0; i < op.hv_count && i < kMaxHvSteps; ++i) {
        const HvStep& step = op.hv[i];
        const HvFrame* frame = step.frame < pool.hv_frame_count ? &pool.hv_frames[step.frame] : nullptr;
        text.add("\n  %s %s (mfn 0x%lx)", hv_step_name(step.kind), frame ? hv_frame_name(frame->kind) : "?",
                 frame ? frame->mfn : 0);
        if (step.kind == HvStep::Kind::pin) text.add(" as L%u", step.level);
        if (step.kind == HvStep::Kind::map_fuzz || step.kind == HvStep::Kind::link ||
            step.kind == HvStep::Kind::unmap_fuzz)
          text.add(" table %u slot %u value 0x%lx", step.table, step.slot, step.value);
        if (step.kind == HvStep::Kind::send) text.add(" port %u", step.port);
      }
      break;
    case OpKind::destroy:
      for (unsigned i = 0; i < op.dom_count && i < kMaxDomSteps; ++i) {
        const DomStep& step = op.dom[i];
        text.add("\n  %s%s domain %u", step.racing ? "racing " : "", dom_step_name(step.kind),
                 step.domain < kDestroyDomainCount ? kDestroyDomains[step.domain] : 0xffff);
        if (step.kind == DomStep::Kind::max_mem) text.add(" %u KiB", step.count);
        if (step.kind == DomStep::Kind::populate) text.add(" %u extents of order %u", step.count, step.order);
        if (step.kind == DomStep::Kind::alloc_unbound) text.add(step.remote ? " (dom0's port)" : " (its port)");
        if (step.kind == DomStep::Kind::destroy) text.add(" timer +%lu ns", step.delay_ns);
      }
      break;
  }
  return text.length();
}

}  // namespace lib::fuzz
