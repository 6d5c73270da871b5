// The hypervisor's stacks: the one every entry from a guest lands on (TSS.rsp0, and the
// syscall entry through hypervisor_stack_top) and one interrupt-stack-table stack each for
// NMI, double fault, machine check and #DB. Those may arrive at any instruction, the first
// instructions of the syscall entry included, which still run on the guest's rsp: on a stack
// of their own they never push at an address the guest chose. (A #DB does so when the guest's
// `mov %ss` / `pop %ss` delays it past its `syscall`: XSA-260.)
#pragma once
#include <stdint.h>

namespace stacks {
enum class Ist : unsigned { double_fault = 1, nmi = 2, machine_check = 3, debug = 4 };
constexpr unsigned ist_count = 4;

// Where the stacks are now: first the image's own copies, after guard() their guarded aliases.
uint64_t entry_stack_top();
uint64_t ist_stack_top(Ist ist);

// Maps `pages` 4 KiB pages from machine frame `mfn` at `va` with the leaf `flags`: the
// hypervisor's page tables (memory/hypervisor_page_tables, a floor above the CPU's) do it.
using MapPages = bool (*)(uint64_t va, uint64_t mfn, uint64_t pages, uint64_t flags);

// Maps each stack a second time at STACKS_VIRT_START with an unmapped page below it, and
// moves the TSS and the syscall entry onto those addresses. An overflow then faults into the
// guard page, which ends in a double fault on its own stack (a report, not a triple fault or
// silently overwritten memory). Call before any guest runs.
bool guard(MapPages map);
}  // namespace stacks
