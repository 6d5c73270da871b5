#pragma once
// selftest=<name>: the table of every self-test by name (selftest/<group>/), run one or a list.

namespace kernel {

// Runs the named self-test; false if the name is unknown.
bool selftest_run(const char* name);
// Runs each of a list joined with "+" (selftest=unprivileged+fpu; a comma would split QEMU's
// module list), reporting unknown names.
bool selftest_run_list(const char* names);

}  // namespace kernel
