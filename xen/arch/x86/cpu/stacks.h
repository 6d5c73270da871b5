// The hypervisor's stacks, per CPU: the one every entry from a guest lands on (TSS.rsp0, and
// the syscall entry through its CPU's line of cpu_entry_data) and one interrupt-stack-table
// stack each for NMI, double fault, machine check and #DB. Those may arrive at any
// instruction, the first instructions of the syscall entry included, which still run on the
// guest's rsp: on a stack of their own they never push at an address the guest chose. (A #DB
// does so when the guest's `mov %ss` / `pop %ss` delays it past its `syscall`: XSA-260.)
//
// CPU n's stacks (and an AP's GDT) lie in its window at STACKS_VIRT_START + n *
// PER_CPU_WINDOW_BYTES, each above an unmapped guard page (arch/x86/cpu/per_cpu.h reads the
// CPU from that). CPU 0's are the image's own arrays, mapped a second time by guard(); an AP's
// are frames given at its bring-up (build_ap).
#pragma once
#include <stdint.h>

namespace stacks {
enum class Ist : unsigned { double_fault = 1, nmi = 2, machine_check = 3, debug = 4 };
constexpr unsigned ist_count = 4;

// Where the stacks are now: CPU 0's first the image's own copies, after guard() their guarded
// aliases; an AP's after build_ap (0 before).
uint64_t entry_stack_top(unsigned cpu = 0);
uint64_t ist_stack_top(Ist ist, unsigned cpu = 0);

// Maps `pages` 4 KiB pages from machine frame `mfn` at `va` with the leaf `flags`: the
// hypervisor's page tables (memory/hypervisor_page_tables, a floor above the CPU's) do it.
using MapPages = bool (*)(uint64_t va, uint64_t mfn, uint64_t pages, uint64_t flags);
// A zeroed frame for the hypervisor's own use, or 0 (memory/boot_memory).
using FrameSource = uint64_t (*)();

// Maps CPU 0's stacks a second time in its window with an unmapped page below each, and moves
// the TSS and the syscall entry onto those addresses. An overflow then faults into the guard
// page, which ends in a double fault on its own stack (a report, not a triple fault or
// silently overwritten memory). Call before any guest runs.
bool guard(MapPages map);

// An AP's stacks and GDT: fresh frames from `frame`, mapped in the AP's window, each stack
// above a guard page. Returns its GDT (GDT_BYTES, zeroed), or nullptr when out of frames or
// mappings (the AP is then not started).
uint64_t* build_ap(unsigned cpu, MapPages map, FrameSource frame);
}  // namespace stacks
