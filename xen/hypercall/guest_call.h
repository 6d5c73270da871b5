// The guest kernel's own hypercall (not one inside a multicall), inline into the syscall entry
// (pv/guest_entry.cpp): a hypercall is the most frequent way into the hypervisor, and a call per
// step of the way (trap_dispatch, handle_syscall, dispatch) was a fifth of a one-entry
// mmu_update.
#pragma once
#include <stddef.h>
#include "hypercall/dispatch.h"
#include "hypercall/call_counts.h"

namespace hypercall {
struct HandlerTable {
  Handler h[64]{};
};

namespace detail {
inline constexpr unsigned kTableSize = sizeof(HandlerTable::h) / sizeof(Handler);
// What a guest's hypercall calls through: every slot holds a handler (an empty one refuses), so
// the call needs no test. Switched whole by trace_guest_calls.
extern HandlerTable guest_call_handlers;
// -ENOSYS for a number beyond the table or an empty slot, recorded while tracing is on.
[[gnu::noinline, gnu::cold]] long refuse_unknown_call(Vcpu& vcpu, TrapFrame& frame, Arguments& args);
// A handler stopped part way (`restart`), having rewritten its arguments in the frame: the
// guest re-executes its syscall with them.
[[gnu::noinline, gnu::cold]] void continue_later(TrapFrame& frame);
}  // namespace detail

// Numbers and arguments (rdi, rsi, rdx, r10, r8) as Xen's 64-bit PV ABI defines them; the result
// goes to rax. The number is the whole of rax: rax = 0x1_0000_0011 is not xen_version, it is
// -ENOSYS.
static_assert(offsetof(TrapFrame, rsi) == offsetof(TrapFrame, rdi) + 8 &&
                  offsetof(TrapFrame, rdx) == offsetof(TrapFrame, rdi) + 16 &&
                  offsetof(TrapFrame, r10) == offsetof(TrapFrame, rdi) + 24 &&
                  offsetof(TrapFrame, r8) == offsetof(TrapFrame, rdi) + 32,
              "the argument registers in the ABI's order");
inline Arguments& arguments_of(TrapFrame& frame) { return *reinterpret_cast<Arguments*>(&frame.rdi); }

[[gnu::always_inline]] inline void dispatch(Vcpu& vcpu, TrapFrame& frame) {
  Arguments& args = arguments_of(frame);
  const uint64_t number = frame.rax;
  count_call(number);
  const long result = number < detail::kTableSize ? detail::guest_call_handlers.h[number](vcpu, frame, args)
                                                  : detail::refuse_unknown_call(vcpu, frame, args);
  if (result == restart) [[unlikely]]
    return detail::continue_later(frame);
  frame.rax = uint64_t(result);
}
}  // namespace hypercall
