// Builds the initial domain from the first multiboot module (a 64-bit PV kernel with Xen ELF
// notes) and the second (its initrd), with Xen's 64-bit PV start-of-day layout and contract:
// rsi = start_info, rsp = top of the boot stack, page tables mapped read-only and pinned.
#pragma once
#include "arch/x86/cpu/trap_frame.h"
#include "boot/command_line.h"

struct Domain;

struct Dom0Result {
  bool ok = false;
  const char* error = "";
  Domain* domain = nullptr;
  TrapFrame frame{};
};

namespace dom0_builder {
Dom0Result build(const boot::CommandLine& options);
[[noreturn]] void start(const Dom0Result& dom0);
}  // namespace dom0_builder
