// selftest=swint: what reaches the kernel besides exceptions and system calls, as Xen 4.17
// delivers it (its do_general_protection, permit_softint, sysenter entry and iopl_ok).
//  - `int $n` from the kernel: the trap table's DPL says whether it may (the kernel counts as
//    ring 1): delivered to the handler, else #GP with the IDT error code.
//  - CALLBACKTYPE_sysenter registers; no callback of a 64-bit PV guest can be unregistered.
//  - VMASST_TYPE_architectural_iopl: the kernel counts as ring 0 for cli (and I/O) whatever
//    its virtual IOPL; without it, ring 1.
// It leaves the software-interrupt vectors, the sysenter callback and the assist in place for
// init=/swint (guest/user/swint.c), which makes the same checks from user mode.
//
// Vectors: 0x80 (DPL 3, then 0), 0x90 (DPL 3), 0x91 (DPL 1), 0x81 (DPL 0). Under QEMU's TCG the #GP
// of a refused `int $n` names vector 2n (design.md section 11), which Xen 4.17 takes as the
// vector: 0x20 and 0x22 carry 0x90's and 0x91's DPL and a handler as well, so Xen's answer
// under TCG is the one it gives on hardware; 0x02 (for 0x81) has no entry, DPL 0.
#include "arch/hypercall.h"
#include "pv-kernel-patches/traps.h"
#include "arch/xen.h"
#include "arch/hostile_probes.h"
#include "selftest/cpu/cpu_selftests.h"
#include "kernel/process/software_interrupts.h"
#include <xen/errno.h>
#include <xen/physdev.h>

extern "C" {
void trap_software_0x20();
void trap_software_0x22();
void trap_software_0x80();
void trap_software_0x81();
void trap_software_0x90();
void trap_software_0x91();
void sysenter_callback_entry();
}

namespace kernel {
namespace {
constexpr uint8_t kMaskEvents = 4;
constexpr long kGeneralProtection0 = 13l << 16;

trap_info_t gate(uint8_t vector, void (*handler)(), uint8_t dpl) {
  return trap_info_t{vector, uint8_t(kMaskEvents | dpl), FLAT_KERNEL_CS, reinterpret_cast<unsigned long>(handler)};
}

long unregister(unsigned type) {
  callback_unregister_t request{};
  request.type = uint16_t(type);
  return arch::hypercall(__HYPERVISOR_callback_op, CALLBACKOP_unregister, arch::arg(&request));
}

long set_iopl(uint32_t iopl) {
  physdev_set_iopl_t request{iopl};
  return arch::hypercall(__HYPERVISOR_physdev_op, PHYSDEVOP_set_iopl, arch::arg(&request));
}

// A refused `int $n`: #GP whose error code names IDT entry n, n*8+2 (Xen 4.17 under TCG passes
// on the emulator's n*16+2).
bool refused_as(long got, unsigned vector) {
  const long error = got & 0xffff;
  return (got >> 16) == 13 && (error == long(vector) * 8 + 2 || error == long(vector) * 16 + 2);
}

// Without a handler, int $0x80 takes the #GP path: #GP naming IDT entry 0x80, 0x402 (XTF's
// XSA-259 test; Xen builds that error code itself, so TCG's quirk does not show).
void without_handler(SelfTest& test) {
  pv::traps_remove_all();
  pv::traps_install();
  test.check("int $0x80 with no handler from the kernel is #GP, error code 0x402", probe_int_0x80(),
             (13l << 16) | (0x80 * 8 + 2));
}

void registration(SelfTest& test) {
  static const trap_info_t table[] = {
      gate(0x20, trap_software_0x20, 3), gate(0x22, trap_software_0x22, 1), gate(0x80, trap_software_0x80, 3),
      gate(0x81, trap_software_0x81, 0), gate(0x90, trap_software_0x90, 3), gate(0x91, trap_software_0x91, 1),
      trap_info_t{0, 0, 0, 0},
  };
  test.check("set_trap_table with software-interrupt vectors", xen::set_trap_table(table), 0);
  test.check("CALLBACKTYPE_sysenter registers",
             xen::callback_register(CALLBACKTYPE_sysenter, reinterpret_cast<uint64_t>(sysenter_callback_entry),
                                    CALLBACKF_mask_events),
             0);
  test.check("a non-canonical sysenter callback is -EINVAL",
             xen::callback_register(CALLBACKTYPE_sysenter, 0x0000800000000000ull, 0), -XEN_EINVAL);
  test.check("CALLBACKOP_unregister of sysenter is -EINVAL", unregister(CALLBACKTYPE_sysenter), -XEN_EINVAL);
  test.check("CALLBACKOP_unregister of syscall is -EINVAL", unregister(CALLBACKTYPE_syscall), -XEN_EINVAL);
  test.check("CALLBACKOP_unregister of an unknown type is -ENOSYS", unregister(6), -XEN_ENOSYS);
}

void kernel_software_interrupts(SelfTest& test) {
  test.check("int $0x80 (DPL 3) from the kernel is delivered", probe_int_0x80(), long(kSoftwareInterruptDelivered));
  test.check("int $0x90 (DPL 3) from the kernel is delivered", probe_int_0x90(), long(kSoftwareInterruptDelivered));
  test.check("int $0x91 (DPL 1) from the kernel is delivered", probe_int_0x91(), long(kSoftwareInterruptDelivered));
  // Xen lets int $0x80 through a DPL-3 gate of its own to whatever handler vector 0x80 has,
  // whatever its DPL (init=/swint checks it from user mode: 0x80 is left at DPL 0).
  static const trap_info_t kernel_only_0x80[] = {gate(0x80, trap_software_0x80, 0), trap_info_t{0, 0, 0, 0}};
  test.check("vector 0x80 with DPL 0", xen::set_trap_table(kernel_only_0x80), 0);
  test.check("int $0x80 (DPL 0) from the kernel is delivered", probe_int_0x80(), long(kSoftwareInterruptDelivered));
  const long refused = probe_int_0x81();
  test.note("int $0x81 (DPL 0) from the kernel: #GP error code", refused & 0xffff);
  test.check("int $0x81 (DPL 0) from the kernel is #GP naming IDT entry 0x81", refused_as(refused, 0x81), true);
}

void architectural_iopl(SelfTest& test) {
  test.check("PHYSDEVOP_set_iopl 0 works", set_iopl(0), 0);
  test.check("cli from the kernel at virtual IOPL 0 is #GP(0) (it counts as ring 1)", probe_cli(), kGeneralProtection0);
  test.check("VMASST_TYPE_architectural_iopl enables",
             xen::vm_assist(VMASST_CMD_enable, VMASST_TYPE_architectural_iopl), 0);
  test.check("cli from the kernel at virtual IOPL 0 completes (it counts as ring 0)", probe_cli(), 0);
  test.check("and disables", xen::vm_assist(VMASST_CMD_disable, VMASST_TYPE_architectural_iopl), 0);
  test.check("cli from the kernel is #GP(0) again", probe_cli(), kGeneralProtection0);
  test.check("VMASST_TYPE_architectural_iopl enables again (for init=/swint)",
             xen::vm_assist(VMASST_CMD_enable, VMASST_TYPE_architectural_iopl), 0);
  set_architectural_iopl(true);
}
}  // namespace

void selftest_swint(SelfTest& test) {
  without_handler(test);
  registration(test);
  kernel_software_interrupts(test);
  architectural_iopl(test);
}
}  // namespace kernel
