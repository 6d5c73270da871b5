// Names and expected shapes of the events the tools know: Xen's and ours.
#pragma once
#include <cstdint>

namespace trace {

// A short name ("pv_page_fault", "ptwr_unhook", ...) or "unknown".
const char* event_name(uint32_t event);

// The number of extra words an event must carry, or -1 when it varies or is unknown.
int expected_extra_words(uint32_t event);

// True when the event's class field is exactly one of the classes in <xen/trace.h>.
bool is_known_class(uint32_t event);

// Xenalyze's top-level class index (0 gen, 1 sched, 2 dom0op, 3 hvm, 4 mem, 5 pv, 6 shadow,
// 7 hw), or -1 when the class field does not have exactly one of those bits set.
int toplevel_class(uint32_t event);
const char* toplevel_name(int toplevel);
constexpr int kToplevelCount = 8;

// Hypercall name by number as in <xen/xen.h> ("mmu_update"), or nullptr.
const char* hypercall_name(uint32_t op);

}  // namespace trace
