// selftest=debugreg, second half: breakpoints that fire, as Xen 4.17 loads a PV guest's debug
// registers into the CPU (arch/debugreg_probes.S holds the code they fire in, kernel/
// debug_traps records each #DB with DR6 as the guest reads it). Checked:
//  - a data breakpoint (set_debugreg, then one mov to DR7: XTF debug-regs' latch test), an
//    instruction breakpoint and a single step in the kernel: #DB at Xen's rip with Xen's DR6
//    (B0, B1, BS over the reserved ones), read back until the guest clears it;
//  - a data breakpoint on guest memory the hypervisor writes for a hypercall: the #DB comes in
//    the hypervisor's context, which drops it (the guest sees neither a #DB nor a DR6 bit) and
//    carries on;
//  - XSA-260 / XSA-265: `mov %ss` from a watched word, then nop / syscall / int3 / int $0x80,
//    with DR6.BD set first (sticky) for XSA-265. On hardware the #DB waits past the next
//    instruction (into the hypervisor's entry, where it is dropped); QEMU's TCG raises it at
//    once, at the next instruction, in the guest: both hypervisors then deliver it there and
//    the instruction runs after it. These checks assert what TCG gives (design.md section 11).
//  - DR7 0 disarms: nothing fires afterwards.
// `pop %ss` does not exist in 64-bit code (#UD), so only `mov %ss` is tried.
#include <stdint.h>
#include <xen/xen.h>
#include <xen/version.h>
#include "arch/hypercall.h"
#include "pv-kernel-patches/traps.h"
#include "arch/xen.h"
#include "selftest/cpu/debug_traps.h"
#include "arch/hostile_probes.h"
#include "selftest/cpu/cpu_selftests.h"
#include "kernel/process/software_interrupts.h"

extern "C" {
int probe_instruction_target();
void probe_store_watched();
void probe_load_watched();
void probe_single_step();
long probe_movss_nop();
long probe_movss_syscall(long hypercall, long argument);
long probe_movss_int3();
long probe_movss_int80();
void trap_software_0x80();
extern char probe_store_watched_after[], probe_single_step_after[], probe_movss_nop_at[], probe_movss_syscall_at[],
    probe_movss_int3_at[], probe_movss_int3_after[], probe_movss_int80_at[];
extern volatile uint64_t probe_watched[2];
extern volatile uint64_t probe_watched_ss;
}

namespace kernel {
namespace {
constexpr long kDr6Default = 0xffff0ff0, kB0 = 1, kB1 = 2, kBd = 1 << 13, kBs = 1 << 14;
constexpr unsigned kExecute = 0, kWrite = 1, kReadWrite = 3;  // DR7 R/W fields
constexpr unsigned kLength1 = 0, kLength2 = 1, kLength8 = 2;  // DR7 LEN fields
constexpr uint64_t kDebug = 1, kBreakpoint = 3;

long set(long reg, uint64_t value) { return arch::hypercall(__HYPERVISOR_set_debugreg, uint64_t(reg), value); }
long get(long reg) { return arch::hypercall(__HYPERVISOR_get_debugreg, uint64_t(reg)); }
template <typename T>
uint64_t address_of(T* thing) {
  return reinterpret_cast<uint64_t>(thing);
}

// DR7 with breakpoint `n` locally enabled, of type `rw` and length `length`.
uint64_t dr7_for(unsigned n, unsigned rw, unsigned length) {
  return 0x400 | (1u << (2 * n)) | (rw << (16 + 4 * n)) | (length << (18 + 4 * n));
}

// How many traps were recorded, and the first one's vector, rip and DR6.
void check_first(SelfTest& test, const char* what, unsigned traps, uint64_t vector, const void* rip, long dr6) {
  test.check(what, debug_traps::count(), traps);
  if (debug_traps::count() < 1) return;
  const debug_traps::Trap& trap = debug_traps::at(0);
  test.check("  its vector", long(trap.vector), long(vector));
  test.check("  its rip", long(trap.rip), long(address_of(rip)));
  if (vector == kDebug) test.check("  DR6 it read", long(trap.dr6), dr6);
}
void check_one(SelfTest& test, const char* what, uint64_t vector, const void* rip, long dr6) {
  check_first(test, what, 1, vector, rip, dr6);
}

void disarm(SelfTest& test) {
  test.check("  set_debugreg 7 0 works", set(7, 0), 0);
  test.check("  DR6 reads its default (the handler cleared it)", get(6), kDr6Default);
}

void data_breakpoints(SelfTest& test) {
  test.check("set_debugreg 0 to a watched kernel word works", set(0, address_of(&probe_watched[0])), 0);
  test.check("set_debugreg 7 arming a write breakpoint on it works", set(7, dr7_for(0, kWrite, kLength8)), 0);
  debug_traps::clear();
  probe_load_watched();
  test.check("a load of the word raises nothing", debug_traps::count(), 0);
  probe_store_watched();
  check_one(test, "a store to the word raises one #DB", kDebug, probe_store_watched_after, kDr6Default | kB0);
  disarm(test);

  // XTF debug-regs' latch test: one mov to DR7 arms what DR0 already holds.
  test.check("mov to DR7 arming the breakpoint once works", probe_write_dr(7, dr7_for(0, kWrite, kLength8)), 0);
  debug_traps::clear();
  probe_store_watched();
  check_one(test, "  a store to the word raises one #DB", kDebug, probe_store_watched_after, kDr6Default | kB0);
  test.check("  a second store raises another", (probe_store_watched(), debug_traps::count()), 2);
  disarm(test);
  test.check("  and with DR7 0, a store raises nothing", (probe_store_watched(), debug_traps::count()), 2);
}

void instruction_breakpoint_and_single_step(SelfTest& test) {
  test.check("set_debugreg 1 to kernel code works", set(1, address_of(probe_instruction_target)), 0);
  test.check("set_debugreg 7 arming an instruction breakpoint works", set(7, dr7_for(1, kExecute, kLength1)), 0);
  debug_traps::clear();
  test.check("the code runs once (the handler resumes with RF)", probe_instruction_target(), 1);
  check_one(test, "  after one #DB at its first instruction", kDebug, reinterpret_cast<void*>(probe_instruction_target),
            kDr6Default | kB1);
  disarm(test);
  test.check("set_debugreg 1 back to 0 works", set(1, 0), 0);

  debug_traps::clear();
  probe_single_step();
  check_one(test, "a single step (TF) raises one #DB after the next instruction", kDebug, probe_single_step_after,
            kDr6Default | kBs);
  test.check("  DR6 reads its default (the handler cleared it)", get(6), kDr6Default);
}

// A data breakpoint on the buffer xen_version fills: the hypervisor's own store hits it.
void breakpoint_in_hypervisor_context(SelfTest& test) {
  static xen_extraversion_t extra;
  test.check("set_debugreg 0 to a hypercall's buffer works", set(0, address_of(&extra)), 0);
  test.check("set_debugreg 7 arming a write breakpoint on it works", set(7, dr7_for(0, kWrite, kLength8)), 0);
  debug_traps::clear();
  test.check("xen_version fills the watched buffer", xen::xen_version(XENVER_extraversion, &extra), 0);
  test.check("  the guest sees no #DB (the hypervisor's was dropped)", debug_traps::count(), 0);
  test.check("  and no DR6 bit", get(6), kDr6Default);
  disarm(test);
}

// XSA-260's sequences with the breakpoint on the word `mov %ss` reads (XTF: 4 bytes, read or
// write); the selector is the kernel's own, so the move itself changes nothing.
void mov_ss_sequences(SelfTest& test) {
  uint16_t ss = 0;
  asm volatile("mov %%ss, %0" : "=r"(ss));
  probe_watched_ss = ss;
  test.check("set_debugreg 0 to the word mov %ss reads works", set(0, address_of(&probe_watched_ss)), 0);
  test.check("set_debugreg 7 arming a read/write breakpoint on it works", set(7, dr7_for(0, kReadWrite, kLength2)), 0);

  debug_traps::clear();
  probe_movss_nop();
  check_one(test, "mov %ss; nop: one #DB, at the nop under TCG", kDebug, probe_movss_nop_at, kDr6Default | kB0);

  const long version = xen::xen_version(XENVER_version, nullptr);
  debug_traps::clear();
  test.check("mov %ss; syscall: the hypercall completes", probe_movss_syscall(__HYPERVISOR_xen_version, XENVER_version),
             version);
  check_one(test, "  after one #DB, at the syscall under TCG", kDebug, probe_movss_syscall_at, kDr6Default | kB0);

  debug_traps::clear();
  probe_movss_int3();
  test.check("mov %ss; int3: a #DB at the int3 under TCG, then #BP", debug_traps::count(), 2);
  if (debug_traps::count() == 2) {
    test.check("  #DB first", long(debug_traps::at(0).vector), long(kDebug));
    test.check("  at the int3", long(debug_traps::at(0).rip), long(address_of(probe_movss_int3_at)));
    test.check("  DR6 it read", long(debug_traps::at(0).dr6), kDr6Default | kB0);
    test.check("  then #BP", long(debug_traps::at(1).vector), long(kBreakpoint));
    test.check("  after the int3", long(debug_traps::at(1).rip), long(address_of(probe_movss_int3_after)));
  }

  static const trap_info_t int80[] = {
      trap_info_t{0x80, 4 | 3, FLAT_KERNEL_CS, reinterpret_cast<unsigned long>(trap_software_0x80)},
      trap_info_t{0, 0, 0, 0}};
  test.check("set_trap_table with vector 0x80 (DPL 3)", xen::set_trap_table(int80), 0);
  debug_traps::clear();
  test.check("mov %ss; int $0x80: the handler runs", probe_movss_int80(), long(kSoftwareInterruptDelivered));
  check_one(test, "  after one #DB, at the int under TCG", kDebug, probe_movss_int80_at, kDr6Default | kB0);
  pv::traps_remove_all();
  pv::traps_install();

  // XSA-265: DR6.BD is sticky; a #DB in hypervisor context must not take it for a fault of its own.
  test.check("set_debugreg 6 with BD works", set(6, kDr6Default | kBd), 0);
  debug_traps::clear();
  probe_movss_int3();
  check_first(test, "mov %ss; int3 with BD set: #DB (keeping BD) then #BP", 2, kDebug, probe_movss_int3_at,
              kDr6Default | kBd | kB0);
  disarm(test);
}
}  // namespace

void selftest_debugreg_traps(SelfTest& test) {
  data_breakpoints(test);
  instruction_breakpoint_and_single_step(test);
  breakpoint_in_hypervisor_context(test);
  mov_ss_sequences(test);
  test.check("set_debugreg 0 back to 0 works", set(0, 0), 0);
}
}  // namespace kernel
