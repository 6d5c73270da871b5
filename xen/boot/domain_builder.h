// Builds a domain from a multiboot kernel module (a 64-bit PV kernel with Xen ELF notes) and
// optionally an initrd module, with Xen's 64-bit PV start-of-day layout and contract:
// rsi = start_info, rsp = top of the boot stack, page tables mapped read-only and pinned.
// dom0 is privileged (SIF_PRIVILEGED|SIF_INITDOMAIN); a domU built at boot is not
// (boot/boot_domains says which modules make which domain).
#pragma once
#include <stdint.h>
#include "boot/boot_domains.h"
#include "boot/command_line.h"

struct Domain;

struct BuildResult {
  bool ok = false;
  const char* error = "";
  Domain* domain = nullptr;  // its vCPU's registers hold the entry state
};

namespace domain_builder {
BuildResult build(const boot::BootDomain& plan, const boot::CommandLine& options);
// Enters dom0; every other domain built waits for its turn on the CPU.
[[noreturn]] void start(Domain& dom0);
}  // namespace domain_builder
