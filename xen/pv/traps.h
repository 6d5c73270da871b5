// Exception and interrupt dispatch, and the report printed when the hypervisor itself faults.
#pragma once
#include "arch/x86/cpu/trap_frame.h"

extern "C" void trap_dispatch(TrapFrame* frame);
[[noreturn]] void fatal_trap(const TrapFrame& frame, const char* why);
void print_registers(const TrapFrame& frame);
void print_backtrace(uint64_t rbp);
