#pragma once
// The C++ dispatcher arch/entry.S calls for every exception, event upcall and system call,
// with the registers it saved.
#include "arch/trap_frame.h"

extern "C" void trap_dispatch(kernel::TrapFrame* frame);
