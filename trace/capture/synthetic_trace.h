// Synthetic traces: what our hypervisor will write, produced through the real TraceRing and
// drained into xentrace windows. Used by the tests, the fuzz seeds and documentation examples.
#pragma once
#include <cstdint>
#include <vector>

namespace trace {

struct SyntheticOptions {
    unsigned forks = 3;
    bool writable = true;          // writable pagetables (unhook/rehook) or emulation
    unsigned ptes_per_table = 8;   // direct writes per unhooked table
    unsigned tables_per_fork = 2;
    uint32_t ring_bytes = 4096;    // small rings exercise wrap padding and lost records
    uint64_t tsc_hz = 3000000000ull;
    bool drain_each_fork = true;   // false: let the ring overflow (lost records)
    uint64_t mid_fork_drain_cycles = 0;  // > 0: a CAPTURE_DRAIN of this length inside each fork
};

std::vector<uint8_t> make_synthetic_trace(const SyntheticOptions& options);

} // namespace trace
