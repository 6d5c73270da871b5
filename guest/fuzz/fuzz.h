#pragma once
// The fuzzing domain (fuzz=<seed>, see guest/README.md): seeded random hypercalls, MMU batches,
// direct page-table stores, hostile iret frames and flags, port I/O and trapping instructions,
// with the frame audit every fuzz_audit=<n> operations and a guest-side check of its own
// tables. The pure part (what to generate, and the rules that keep the fuzzer alive) is
// fuzz/generator/; this is the part that runs it.
#include "arch/trap_frame.h"

namespace kernel {

// Runs the campaign if the command line asks for one (fuzz=<seed>), then returns: the kernel
// goes on to its init, which shows the domain still works.
void fuzz_run_if_requested();

// dom0 beside a fuzzing domU (fuzz_companion): audits whenever the domU asks (through a page of
// its that dom0 maps), checks that dom0's own memory is untouched, and returns when the domU's
// campaign is over or has stopped making progress.
void fuzz_companion_run_if_requested();

// For a kernel-mode trap: true if it came from inside one of the fuzzer's probes (the frame
// then continues, or resumes at the probe's recovery).
bool fuzz_fixup(TrapFrame& frame);

}  // namespace kernel
