// The hypervisor's stacks: the one every entry from a guest lands on (TSS.rsp0, and the
// syscall entry through hypervisor_stack_top) and one interrupt-stack-table stack each for
// NMI, double fault and machine check. Those three may arrive at any instruction, the first
// instructions of the syscall entry included, which still run on the guest's rsp: on a stack
// of their own they never push at an address the guest chose.
#pragma once
#include <stdint.h>
#include "memory/hypervisor_page_tables.h"

namespace stacks {
enum class Ist : unsigned { double_fault = 1, nmi = 2, machine_check = 3 };
constexpr unsigned ist_count = 3;

// Where the stacks are now: first the image's own copies, after guard() their guarded aliases.
uint64_t entry_stack_top();
uint64_t ist_stack_top(Ist ist);

// Maps each stack a second time at STACKS_VIRT_START with an unmapped page below it, and
// moves the TSS and the syscall entry onto those addresses. An overflow then faults into the
// guard page, which ends in a double fault on its own stack (a report, not a triple fault or
// silently overwritten memory). Call before any guest runs.
bool guard(hypervisor_page_tables::FrameSource new_frame);
}  // namespace stacks
