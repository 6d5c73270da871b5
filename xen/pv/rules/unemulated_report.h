// What the hypervisor says when a guest instruction faults and it performs nothing for it: a
// #GP with error code 0 or a #UD that pv/privileged_op and pv/invalid_op did not emulate. The
// guest then gets the fault, as Xen passes a #GP it cannot emulate on (do_general_protection),
// or is crashed when it has no handler for it; the line names the vCPU, the mode, the RIP and
// the instruction's bytes, so a crash says which instruction it was. A guest can raise such
// faults in a loop: each domain gets its first kLoggedPerDomain lines, and the fatal one always.
// Pure: the rules and the formatting; the glue is pv/guest_entry.
#pragma once
#include <stddef.h>
#include <stdint.h>

namespace unemulated_report {
inline constexpr uint32_t kLoggedPerDomain = 16;

// Whether the domain's next report is printed, `reported` having been printed before.
bool should_log(uint32_t reported, bool fatal);

// `count` bytes as lowercase hex pairs separated by spaces ("0f 0b"; "none" for 0) into `out`,
// truncated to `size` - 1 characters; returns the characters written.
size_t format_bytes(const uint8_t* bytes, size_t count, char* out, size_t size);

// The fault's name in the report ("#GP", "#UD"), nullptr for a vector that is not reported.
const char* vector_name(unsigned vector);
}  // namespace unemulated_report
