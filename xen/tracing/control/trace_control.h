// XEN_SYSCTL_tbuf_op's side of the trace buffers (tracing/trace_buffers records into them), as
// Xen's tb_control: the buffers are allocated once, from the machine's free frames, and shared
// with privileged domains (dom0 maps t_info to find each CPU's buffer); one buffer per CPU online
// when they are allocated; recording starts once they exist, on the CPUs of the CPU mask.
#pragma once
#include <stdint.h>

namespace trace_control {
struct Info {
  uint64_t t_info_mfn = 0;
  uint32_t t_info_bytes = 0;
  uint32_t event_mask = 0;
  uint64_t buffer_cpus = 0;  // the CPUs that have a buffer
};

// Each returns 0 or a negative Xen errno, as Xen answers XEN_SYSCTL_tbuf_op.
long set_size(uint32_t pages_per_cpu);  // allocates them, once, and enables (Xen's rules)
long enable();                          // -EINVAL before set_size, as on Xen
long disable();
void set_cpu_mask(uint64_t mask);
Info info();
}  // namespace trace_control
