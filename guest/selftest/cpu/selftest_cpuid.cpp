// selftest=cpuid: Xen's forced-emulation CPUID (`ud2; .ascii "xen"; cpuid`, the way Linux's
// xen_cpuid asks), as Xen 4.17's emul-inv-op.c answers it with its PV policy: the hypervisor
// leaves ("XenVMMXenVMM", version 4.17, the hypercall-page leaf, no HVM leaf), the
// HYPERVISOR bit, APIC id 0, VMX and MONITOR hidden, zeros beyond the last leaf and for
// unknown ranges; the prefix before anything but cpuid stays the guest's #UD. The same checks
// run on Xen 4.17.
#include "arch/hostile_probes.h"
#include "selftest/cpu/cpu_selftests.h"

namespace kernel {
namespace {
constexpr long kInvalidOpcode = 6l << 16;
constexpr uint32_t kBase = 0x40000000;

struct Regs {
  uint32_t a = 0, b = 0, c = 0, d = 0;
};

long forced(uint32_t leaf, uint32_t subleaf, Regs& out) {
  uint32_t words[4] = {};
  long rc = probe_forced_cpuid(leaf, subleaf, words);
  out = Regs{words[0], words[1], words[2], words[3]};
  return rc;
}

Regs native(uint32_t leaf) {
  Regs r;
  asm volatile("cpuid" : "=a"(r.a), "=b"(r.b), "=c"(r.c), "=d"(r.d) : "a"(leaf), "c"(0));
  return r;
}

bool zero(const Regs& r) { return (r.a | r.b | r.c | r.d) == 0; }

void hypervisor_leaves(SelfTest& test) {
  Regs r;
  test.check("forced cpuid 0x40000000 completes", forced(kBase, 0, r), 0);
  test.check("its largest leaf is 0x40000005", r.a, kBase + 5);
  test.check("signature XenV", r.b, 0x566e6558);
  test.check("signature MMXe", r.c, 0x65584d4d);
  test.check("signature nVMM", r.d, 0x4d4d566e);
  test.check("forced cpuid 0x40000001 completes", forced(kBase + 1, 0, r), 0);
  test.check("version 4.17", r.a, 0x00040011);
  test.check("forced cpuid 0x40000002 completes", forced(kBase + 2, 0, r), 0);
  test.check("one hypercall page", r.a, 1);
  test.check("its MSR is 0x40000000", r.b, kBase);
  test.check("PV feature MMU_PT_UPDATE_PRESERVE_AD", r.c, 1);
  test.check("forced cpuid 0x40000004 (HVM's) completes", forced(kBase + 4, 0, r), 0);
  test.check("and is empty for PV", zero(r), true);
  test.check("forced cpuid 0x40000005 completes", forced(kBase + 5, 0, r), 0);
  test.note("machine address width", r.b);
  test.check("a machine address width of at most 52 bits, covering the machine", r.b >= 20 && r.b <= 52, true);
  static const uint32_t beyond[] = {kBase + 6, kBase + 0xff, kBase + 0x100, 0x4fffffffu, 0x7fffffffu, 0xc0000000u};
  for (uint32_t leaf : beyond) {
    test.check("a leaf beyond the hypervisor's completes", forced(leaf, 0, r), 0);
    test.check("and is all zeros", zero(r), true);
  }
}

void basic_leaves(SelfTest& test) {
  Regs r;
  const Regs host0 = native(0);
  test.check("forced cpuid 0 completes", forced(0, 0, r), 0);
  test.check("the vendor is the CPU's", r.b == host0.b && r.c == host0.c && r.d == host0.d, true);
  test.check("at most 0xd basic leaves", r.a <= 0xd, true);
  const uint32_t max_basic = r.a;
  test.check("forced cpuid 1 completes", forced(1, 0, r), 0);
  test.check("HYPERVISOR is set", (r.c >> 31) & 1, 1);
  test.check("VMX is hidden", (r.c >> 5) & 1, 0);
  test.check("MONITOR is hidden", (r.c >> 3) & 1, 0);
  test.check("the APIC id is 0", r.b >> 24, 0);
  test.check("VME is hidden (HVM only)", (r.d >> 1) & 1, 0);
  test.check("FPU is there", r.d & 1, 1);
  test.check("a basic leaf beyond the last completes", forced(max_basic + 1, 0, r), 0);
  test.check("and is all zeros", zero(r), true);
  test.check("forced cpuid 0x80000000 completes", forced(0x80000000, 0, r), 0);
  test.check("extended leaves up to 0x80000008 (Intel) or 0x80000021 (AMD)", r.a >= 0x80000001 && r.a <= 0x80000021,
             true);
  test.check("an extended leaf beyond the last completes", forced(r.a + 1, 0, r), 0);
  test.check("and is all zeros", zero(r), true);
}
}  // namespace

void selftest_cpuid(SelfTest& test) {
  hypervisor_leaves(test);
  basic_leaves(test);
  test.check("the prefix before a nop stays #UD", probe_forced_not_cpuid(), kInvalidOpcode);
}
}  // namespace kernel
