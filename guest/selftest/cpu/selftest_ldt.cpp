// selftest=ldt: MMUEXT_SET_LDT as Xen 4.17's do_mmuext_op checks it (Linux's load_mm_ldt sets
// an empty LDT early in cpu_init and panics in xen_mc_flush if that fails): an empty LDT
// ignores its address; a non-empty one needs a page-aligned guest address and at most 8192
// entries; bad arguments are -EINVAL and stop a batch there (the done count says where).
// Using an LDT selector is not tested: Xen maps the LDT's pages on first use, ours does not
// (pv/rules/ldt_rules.h). The same checks run on Xen 4.17.
#include "arch/hypercall.h"
#include "arch/xen.h"
#include "selftest/cpu/cpu_selftests.h"

namespace kernel {
namespace {
alignas(4096) uint64_t ldt_page[512];

mmuext_op_t set_ldt_op(uint64_t address, unsigned entries) {
  mmuext_op_t op{};
  op.cmd = MMUEXT_SET_LDT;
  op.arg1.linear_addr = address;
  op.arg2.nr_ents = entries;
  return op;
}

long batch(const mmuext_op_t* ops, unsigned count, unsigned& done, domid_t foreigndom = DOMID_SELF) {
  done = ~0u;
  return arch::hypercall(__HYPERVISOR_mmuext_op, arch::arg(ops), count, arch::arg(&done), foreigndom);
}

long set_ldt(uint64_t address, unsigned entries) {
  const mmuext_op_t op = set_ldt_op(address, entries);
  unsigned done = 0;
  return batch(&op, 1, done);
}
}  // namespace

void selftest_ldt(SelfTest& test) {
  const uint64_t page = reinterpret_cast<uint64_t>(ldt_page);
  test.check("SET_LDT empty (Linux's load_mm_ldt) works", set_ldt(0, 0), 0);
  test.check("SET_LDT empty ignores a bad address", set_ldt(0xffff800000000123ull, 0), 0);
  test.check("SET_LDT of one page-aligned entry works", set_ldt(page, 1), 0);
  test.check("SET_LDT of 8192 entries (64 KiB) works", set_ldt(page, 8192), 0);
  test.check("SET_LDT of 8193 entries is -EINVAL", set_ldt(page, 8193), -XEN_EINVAL);
  test.check("SET_LDT of 0xffffffff entries is -EINVAL", set_ldt(page, 0xffffffffu), -XEN_EINVAL);
  test.check("SET_LDT of an unaligned address is -EINVAL", set_ldt(page + 8, 1), -XEN_EINVAL);
  test.check("SET_LDT in the hypervisor's range is -EINVAL", set_ldt(0xffff800000000000ull, 1), -XEN_EINVAL);
  test.check("SET_LDT at the hypervisor range's last page is -EINVAL", set_ldt(0xffff87fffffff000ull, 1), -XEN_EINVAL);
  test.check("SET_LDT at a non-canonical address is -EINVAL", set_ldt(0x0000800000000000ull, 1), -XEN_EINVAL);
  test.check("SET_LDT in the lower half works", set_ldt(0x10000, 1), 0);

  const mmuext_op_t ops[3] = {set_ldt_op(page, 2), set_ldt_op(page + 0x10, 2), set_ldt_op(0, 0)};
  unsigned done = 0;
  test.check("a batch stops at a bad SET_LDT: -EINVAL", batch(ops, 3, done), -XEN_EINVAL);
  test.check("  after the first one", done, 1);
  test.check("a batch of good ones ends with an empty LDT", batch(ops + 2, 1, done), 0);
  test.check("  all done", done, 1);
  test.check("SET_LDT for a domain that does not exist is -ESRCH", batch(ops + 2, 1, done, 0x1234), -XEN_ESRCH);
  test.check("  and `done` is left as it was (Xen checks the domain first)", done, long(~0u));
}
}  // namespace kernel
