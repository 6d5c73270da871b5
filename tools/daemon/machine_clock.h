// The machine's own clock, for figures in virtual time (bench/run_toolstack_bench.py): the
// hypervisor's system time (ns since it booted) as dom0's vcpu_time_info holds it, read through
// the relay from dom0's shared_info frame (as DOMID_SELF: naming itself is -ESRCH). Under QEMU's
// -icount it is virtual time, not the host's. The hypervisor refreshes it when it schedules
// dom0's vCPU in: after dom0 idled, the request that reads it woke dom0, so it is the time that
// request began to be served; while the relay spins through close requests it grows old.
#pragma once
#include <cstdint>
#include <optional>

struct xc_interface_core;

namespace pvhv::daemon {

// On a link thread; nullopt when dom0's shared_info cannot be read.
std::optional<uint64_t> hypervisor_system_time_ns(xc_interface_core* xch);

}  // namespace pvhv::daemon
