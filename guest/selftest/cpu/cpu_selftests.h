#pragma once
// The self-tests of the vCPU's interface (selftest/cpu/): the hypercall entry, traps and
// software interrupts, privileged instructions and registers, descriptor tables, the FPU, I/O
// ports, and a kernel attacking the hypervisor's CPU paths.
#include "selftest/selftest.h"

namespace kernel {

void selftest_hypercall(SelfTest& test);       // bad hypercall numbers, sub-ops and pointers
void selftest_fault(SelfTest& test);           // a fault without a handler crashes the domain
void selftest_fpu(SelfTest& test);             // the FPU state is the vCPU's own
void selftest_privop(SelfTest& test);          // privileged instructions performed after their #GP
void selftest_swint(SelfTest& test);           // int $n, sysenter, virtual IOPL (selftest_swint.cpp)
void selftest_msr(SelfTest& test);             // the MSRs Xen serves a PV kernel (selftest_msr.cpp)
void selftest_ldt(SelfTest& test);             // MMUEXT_SET_LDT (selftest_ldt.cpp)
void selftest_debugreg(SelfTest& test);        // set_debugreg / get_debugreg (selftest_debugreg.cpp)
void selftest_debugreg_traps(SelfTest& test);  // breakpoints that fire (selftest_debugreg_traps.cpp)
void selftest_cpuid(SelfTest& test);           // forced-emulation CPUID (selftest_cpuid.cpp)
void selftest_gdt(SelfTest& test);             // set_gdt and update_descriptor (selftest_gdt.cpp)
void selftest_ioports(SelfTest& test);         // dom0: wide port accesses over hypervisor ports
void selftest_hostile_cpu(SelfTest& test);
// The groups of selftest_hostile_cpu, each runnable alone under its own name.
struct HostileGroup {
  const char* name;
  void (*run)(SelfTest&);
};
extern const HostileGroup hostile_cpu_groups[];
extern const unsigned hostile_cpu_group_count;
void selftest_hostile_iret_crash(SelfTest& test);
void selftest_hostile_privop_crash(SelfTest& test);

}  // namespace kernel
