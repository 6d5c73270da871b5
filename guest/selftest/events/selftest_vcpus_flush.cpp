// selftest=vcpus-flush: remote TLB flushes while the domain's other vCPUs run. Every other vCPU
// is brought up and given work that spins in the kernel (the domain's page tables loaded on its
// CPU, events masked) until vCPU 0 says stop; meanwhile vCPU 0 makes MMUEXT_TLB_FLUSH_ALL and
// MMUEXT_INVLPG_ALL, which the hypervisor must carry out on every CPU the domain may be cached
// on: with sched_smp=1 the CPUs the spinning vCPUs hold, by flush IPIs. The trace test at
// -smp 4 (tests/integration/trace/test_trace_smp.py) checks the FLUSH_IPI_SEND / RECEIVE
// records this makes; here, that every flush is answered 0 and the vCPUs come back.
#include "arch/hypercall.h"
#include "arch/xen.h"
#include "kernel/smp/vcpus.h"
#include "selftest/events/events_selftests.h"
#include "selftest/selftest_page_tables.h"

namespace kernel {
namespace {
constexpr uint64_t kTimeout = 5'000'000'000ull;
constexpr unsigned kFlushes = 64;

uint32_t spinning = 0;  // how many vCPUs are in spin()
uint32_t stop = 0;      // vCPU 0 sets it once its flushes are done

long spin(uint64_t) {
  __atomic_fetch_add(&spinning, 1, __ATOMIC_ACQ_REL);
  while (!__atomic_load_n(&stop, __ATOMIC_ACQUIRE)) asm volatile("pause");
  return 1;
}

long flush(unsigned command, uint64_t address) {
  mmuext_op_t op{};
  op.cmd = command;
  op.arg1.linear_addr = address;
  return arch::hypercall(__HYPERVISOR_mmuext_op, reinterpret_cast<uint64_t>(&op), 1, 0, DOMID_SELF);
}
}  // namespace

void selftest_vcpus_flush(SelfTest& test) {
  const unsigned count = smp::vcpu_count();
  test.note("vCPUs", count);
  test.check("at least two vCPUs (dom0_max_vcpus= / domU_max_vcpus=)", count >= 2, true);
  if (count < 2) return;
  test.check("vCPU 0's own IPI port bound", smp::init(), 0);
  unsigned up = 1;
  for (unsigned id = 1; id < count; ++id) up += smp::start(id).ok() ? 1 : 0;
  test.check("every other vCPU brought up", up, count);
  if (up != count) return;
  for (unsigned id = 1; id < count; ++id) smp::post(id, spin, 0);
  const uint64_t deadline = smp::now_ns() + kTimeout;
  while (__atomic_load_n(&spinning, __ATOMIC_ACQUIRE) < count - 1 && smp::now_ns() < deadline) {
    smp::block_until([] { return false; }, smp::now_ns() + 1'000'000);
  }
  test.check("the other vCPUs spin in the kernel", __atomic_load_n(&spinning, __ATOMIC_ACQUIRE), count - 1);
  long failed = 0;
  uint64_t address = reinterpret_cast<uint64_t>(&stop);
  for (unsigned i = 0; i < kFlushes; ++i) {
    if (flush(MMUEXT_TLB_FLUSH_ALL, 0) != 0) ++failed;
    if (flush(MMUEXT_INVLPG_ALL, address) != 0) ++failed;
  }
  test.check("MMUEXT_TLB_FLUSH_ALL and MMUEXT_INVLPG_ALL while they run: all answered 0", failed, 0);
  __atomic_store_n(&stop, 1, __ATOMIC_RELEASE);
  for (unsigned id = 1; id < count; ++id) {
    long result = 0;
    test.check("  each comes back from its work", smp::wait(id, result, kTimeout) && result == 1, true);
  }
  page_table_tests::check_audit(test);
}
}  // namespace kernel
