// What a domain's console makes the hypervisor console print, within its limits
// (console/output_limit): its text lines, the hypervisor's own messages about its console that
// it can provoke, and one line now and then that says what the limits dropped. Xen prints a
// domU's console_io lines through guest_printk, where guest_loglvl and printk_ratelimit decide;
// here each domain has its own budget, so a flooding domain costs only its own output.
#pragma once
#include <stddef.h>
#include <stdint.h>

struct Domain;

namespace console_output {
// Guest console text as console_io prints it (and a boot domU's console ring, guest_console):
// dom0's as it is (Xen's hardware domain writes directly: its console may be interactive); an
// unprivileged domain's filtered as Xen's guest_console_write filters it
// (console/guest_text_filter: printable characters and tabs only), assembled into lines and
// each printed with a "(dN) " prefix within the domain's output limit.
void write_guest_text(Domain& domain, const char* text, uint64_t length);
// One complete line of the domain's (filtered) text, printed "(dN) line" if its text limit and
// the serial line's room allow, otherwise counted as dropped.
void print_line(Domain& domain, const char* line, size_t length);
// Whether a hypervisor message about the domain's console may be printed now (refused ones
// are counted and reported as suppressed).
bool may_report(Domain& domain);
// After a guest's console output: while bytes wait for the serial line, the timer must come
// back to feed it (the guest may run on without another hypercall).
void keep_draining();
// Reports what the limits dropped and has not been reported yet (the domain stopped).
void report_dropped(Domain& domain);
}  // namespace console_output
