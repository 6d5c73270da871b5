// selftest=privop: privileged instructions a PV kernel executes as if it ran in ring 0, which
// the hypervisor performs for it after their #GP (Xen 4.17's emul-priv-op.c): the raw wrmsr
// of MSR_GS_BASE Linux's startup_xen does before anything else, and the FS and shadow GS
// bases, each read back with rdmsr and checked through the segment itself; a non-canonical
// base and MSRs that are not the kernel's stay its #GP(0). The same checks run on Xen 4.17.
#include "arch/hypercall.h"
#include "arch/xen.h"
#include "arch/hostile_probes.h"
#include "selftest/cpu/cpu_selftests.h"
#include "kernel/memory/physical_memory.h"
#include "pv-kernel-patches/shared_info.h"
#include <xen/physdev.h>

namespace kernel {
namespace {
constexpr uint32_t kFsBase = 0xc0000100, kGsBase = 0xc0000101, kShadowGsBase = 0xc0000102;
constexpr uint32_t kEfer = 0xc0000080, kLstar = 0xc0000082, kUnknown = 0x12345678;
constexpr long kGeneralProtection0 = 13l << 16;

volatile uint64_t fs_target = 0x5a5a0001f5f5f5f5ull, gs_target = 0x6b6b0002a6a6a6a6ull;

uint64_t read_fs0() {
  uint64_t value;
  asm volatile("mov %%fs:0, %0" : "=r"(value));
  return value;
}
uint64_t read_gs0() {
  uint64_t value;
  asm volatile("mov %%gs:0, %0" : "=r"(value));
  return value;
}

long read_back(uint32_t msr, uint64_t expected) {
  uint64_t value = 0;
  long rc = probe_rdmsr(msr, &value);
  return rc != 0 ? rc : long(value == expected);
}

void base(SelfTest& test, const char* name, uint32_t msr, uint64_t target, uint64_t (*through_segment)()) {
  uint64_t saved = 0;
  test.check(name, probe_rdmsr(msr, &saved), 0);
  test.check("wrmsr of the base works", probe_wrmsr(msr, target), 0);
  test.check("rdmsr reads it back", read_back(msr, target), 1);
  if (through_segment)
    test.check("the segment uses it", through_segment() == *reinterpret_cast<volatile uint64_t*>(target), true);
  test.check("a non-canonical base is #GP(0)", probe_wrmsr(msr, 0x0000800000000000ull), kGeneralProtection0);
  test.check("and leaves the base as it was", read_back(msr, target), 1);
  test.check("the old base is back", probe_wrmsr(msr, saved), 0);
}

long set_iopl(uint32_t iopl) {
  physdev_set_iopl_t request{iopl};
  return arch::hypercall(__HYPERVISOR_physdev_op, PHYSDEVOP_set_iopl, arch::arg(&request));
}

// cli / sti: the guest's #GP without I/O privilege, no-ops with it (the event mask, the
// kernel's real interrupt flag, stays as it was).
void interrupt_flag(SelfTest& test) {
  test.check("cli without I/O privilege is #GP(0)", probe_cli(), kGeneralProtection0);
  test.check("sti without I/O privilege is #GP(0)", probe_sti(), kGeneralProtection0);
  test.check("PHYSDEVOP_set_iopl 1 works", set_iopl(1), 0);
  volatile uint8_t& mask = shared_info()->vcpu_info[0].evtchn_upcall_mask;
  const uint8_t mask_before = mask;
  test.check("cli with virtual IOPL 1 completes", probe_cli(), 0);
  test.check("sti with virtual IOPL 1 completes", probe_sti(), 0);
  test.check("and neither touched the event mask", mask == mask_before, true);
  test.check("PHYSDEVOP_set_iopl 0 works", set_iopl(0), 0);
  test.check("cli is #GP(0) again", probe_cli(), kGeneralProtection0);
}
}  // namespace

namespace {
long fpu_taskswitch(unsigned set) { return arch::hypercall(__HYPERVISOR_fpu_taskswitch, set); }

// mov to and from the control registers, as Xen's read_cr / write_cr: CR0 with the guest's
// own TS, only TS writable; CR4 the guest's view (PAE visible, PGE not); CR3 its kernel L4.
void control_registers(SelfTest& test) {
  constexpr uint64_t ts = 1u << 3, pe = 1, wp = 1u << 16, pg = 1ull << 31, pae = 1u << 5, pge = 1u << 7;
  uint64_t cr0 = 0, cr4 = 0, cr3 = 0, again = 0;
  test.check("mov from CR0 works", probe_read_cr(0, &cr0), 0);
  test.check("CR0 has PE and PG", (cr0 & (pe | pg)) == (pe | pg), true);
  test.check("fpu_taskswitch 1 works", fpu_taskswitch(1), 0);
  test.check("mov from CR0 again works", probe_read_cr(0, &again), 0);
  test.check("CR0.TS is the guest's: set", (again & ts) != 0, true);
  test.check("mov to CR0 clearing only TS works", probe_write_cr(0, again & ~ts), 0);
  test.check("mov from CR0 once more works", probe_read_cr(0, &again), 0);
  test.check("CR0.TS is clear", again & ts, 0);
  test.check("mov to CR0 clearing WP is #GP(0)", probe_write_cr(0, again & ~wp), kGeneralProtection0);
  test.check("mov to CR0 clearing PG is #GP(0)", probe_write_cr(0, again & ~pg), kGeneralProtection0);
  test.check("mov from CR4 works", probe_read_cr(4, &cr4), 0);
  test.check("CR4 shows PAE", (cr4 & pae) != 0, true);
  test.check("CR4 hides PGE", cr4 & pge, 0);
  test.check("mov to CR4 of its own value works", probe_write_cr(4, cr4 | pge), 0);
  test.check("mov from CR4 again works", probe_read_cr(4, &again), 0);
  test.check("and PGE stayed the hypervisor's", again, long(cr4));
  test.check("mov from CR3 works", probe_read_cr(3, &cr3), 0);
  test.check("CR3 is the kernel's L4", cr3 >> 12, long(kernel::kernel_l4().value));
}
}  // namespace

void selftest_privop(SelfTest& test) {
  control_registers(test);
  test.check("wbinvd from the kernel completes (Xen performs or ignores it)", probe_wbinvd(), 0);
  interrupt_flag(test);
  base(test, "rdmsr MSR_FS_BASE works", kFsBase, reinterpret_cast<uint64_t>(&fs_target), read_fs0);
  base(test, "rdmsr MSR_GS_BASE (the kernel's) works", kGsBase, reinterpret_cast<uint64_t>(&gs_target), read_gs0);
  base(test, "rdmsr MSR_SHADOW_GS_BASE (user mode's) works", kShadowGsBase, reinterpret_cast<uint64_t>(&gs_target),
       nullptr);
  uint64_t value = 0;
  test.check("rdmsr of an MSR that does not exist is #GP(0)", probe_rdmsr(kUnknown, &value), kGeneralProtection0);
  test.check("wrmsr of an MSR that does not exist is #GP(0)", probe_wrmsr(kUnknown, 0), kGeneralProtection0);
  test.check("wrmsr of MSR_LSTAR (the hypervisor's syscall entry) is #GP(0)", probe_wrmsr(kLstar, 0),
             kGeneralProtection0);
  test.check("wrmsr of MSR_EFER clearing NX, LME, SCE is #GP(0)", probe_wrmsr(kEfer, 0), kGeneralProtection0);
}
}  // namespace kernel
