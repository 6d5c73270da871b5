// Guest console text as console_io prints it: dom0's as it is, an unprivileged domain's as
// "(dN) " lines (also the path of a domU's PV console ring, domain/guest_console).
#pragma once
#include <stdint.h>

struct Domain;

namespace hypercall {
void write_guest_text(Domain& domain, const char* text, uint64_t length);
}  // namespace hypercall
