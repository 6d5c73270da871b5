#pragma once
// The kernel on several vCPUs. vCPU 0 runs the kernel; each other vCPU is brought up the way
// a PV kernel brings up a CPU on Xen (Linux's cpu_initialize_context): an IPI port and a
// VIRQ_TIMER of its own bound for it, its vcpu_info moved into a kernel frame
// (VCPUOP_register_vcpu_info), a context of its own given with VCPUOP_initialise (kernel mode
// on the kernel's L4, its own stack, the kernel's trap table, an event entry of its own), then
// VCPUOP_up. It then waits, blocked, for work: vCPU 0 hands it a function (run_on), and it runs
// it with its events masked except while it blocks, exactly as vCPU 0's kernel does.
#include <stdint.h>

#include "arch/xen.h"
#include "pv-kernel-patches/vcpu_identity.h"

namespace kernel::smp {

// How many vCPUs the domain has: the first id VCPUOP_is_up answers -ENOENT for (Linux's
// probe), at most kMaxVcpus.
unsigned vcpu_count();

// The context vCPU `id` starts from (selectors with RPL 0, which the hypervisor raises to 3).
void secondary_context(unsigned id, vcpu_guest_context& context);

// What start() did for vCPU `id`, each step's hypercall result (the steps after a failure are
// not taken and stay 1).
struct StartSteps {
  long bind_ipi = 1, bind_timer = 1, register_info = 1, initialise = 1, up = 1;
  bool ok() const { return bind_ipi == 0 && bind_timer == 0 && register_info == 0 && initialise == 0 && up == 0; }
};
// Brings vCPU `id` (1 .. vcpu_count() - 1) up; with `skip_initialise` its context is already
// set (the caller initialised it itself) and only VCPUOP_up is made.
StartSteps start(unsigned id, bool skip_initialise = false);
// Binds vCPU 0's own IPI port (the secondaries tell vCPU 0 through it): once, before start().
long init();

// Whether vCPU `id` has reached its work loop (it ran).
bool arrived(unsigned id);

// The work a vCPU runs: its result is handed back.
using Work = long (*)(uint64_t argument);
// Hands `work` to vCPU `id` (>= 1) and wakes it; wait() blocks vCPU 0 until it is done (false
// after `timeout_ns`), then `result` is what it returned.
void post(unsigned id, Work work, uint64_t argument);
bool wait(unsigned id, long& result, uint64_t timeout_ns);
bool run_on(unsigned id, Work work, uint64_t argument, long& result, uint64_t timeout_ns);

// The IPI port of vCPU `id`, and how many IPIs and timer events reached it (its handlers ran
// on it: each counts on the vCPU it runs on).
uint32_t ipi_port(unsigned id);
uint32_t timer_port(unsigned id);
uint64_t ipis_taken(unsigned id);
uint64_t timer_events(unsigned id);
// The vCPU that last ran the handler of vCPU `id`'s IPI port (~0u: none yet), to check that its
// IPIs reach it and no other: per port, as the other vCPUs take IPIs of their own meanwhile.
unsigned ipi_taken_on(unsigned id);

// Blocks the calling vCPU (events unmasked only inside SCHEDOP_block, masked again after the
// upcall) until `done()` holds, or `deadline_ns` passes (0: no deadline; a deadline arms the
// vCPU's own timer with set_timer_op). Returns done().
template <typename Done>
bool block_until(Done done, uint64_t deadline_ns);

// The calling vCPU's vcpu_info, and system time.
inline vcpu_info_t* my_vcpu_info() { return vcpu_info_of(current_vcpu_id()); }
uint64_t now_ns();
}  // namespace kernel::smp

namespace kernel::smp {
template <typename Done>
bool block_until(Done done, uint64_t deadline_ns) {
  vcpu_info_t* info = my_vcpu_info();
  for (;;) {
    __atomic_store_n(&info->evtchn_upcall_mask, 1, __ATOMIC_SEQ_CST);
    if (done()) return true;
    if (deadline_ns) {
      if (now_ns() >= deadline_ns) return false;
      xen::set_timer(deadline_ns);
    }
    xen::sched_op(SCHEDOP_block, nullptr);  // unmasks and checks for an event in one step
  }
}
}  // namespace kernel::smp
