// What a 64-bit PV domU finds when its vCPU first runs, as Xen 4.17's libxenguest writes it
// (xg_dom_x86.c start_info_x86_64, vcpu_x86_64, shared_info_x86_64): pure, unit-tested.
#pragma once
#include <stddef.h>
#include <stdint.h>

#include <xen/xen.h>

#include "tools/libxenguest/pv_layout.h"

namespace xenguest {

// What is known only once the domain exists.
struct StartInputs {
  const uint64_t* p2m = nullptr;  // layout.total_pages machine frames
  uint64_t shared_info_mfn = 0;
  uint32_t store_port = 0;
  uint32_t console_port = 0;
  const char* command_line = nullptr;  // may be null
};

// The guest type in start_info's magic: every 64-bit PV kernel is "xen-3.0-x86_64".
constexpr const char* kGuestType = "xen-3.0-x86_64";

// start_info as libxenguest fills it: page counts, the shared info machine address, the
// virtual addresses of the page tables and the p2m list, the xenstore and console frames and
// ports, the ramdisk as a virtual range, the command line truncated to MAX_GUEST_CMDLINE - 1.
void fill_start_info(const PvLayout& layout, const StartInputs& inputs, start_info_t& out);

// vCPU 0's context: entry at `entry`, rsp at the top of the boot stack, rsi = start_info,
// interrupts enabled, flat kernel selectors, cr3 = the L4's machine frame, kernel mode, online.
void fill_initial_context(const PvLayout& layout, const uint64_t* p2m, uint64_t entry, vcpu_guest_context_t& out);

// The shared info page libxenguest writes: zero, with every legacy vCPU's upcalls masked.
void fill_shared_info(shared_info_t& out);

}  // namespace xenguest
