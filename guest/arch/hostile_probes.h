#pragma once
// Probes for the hostile-guest self-tests (arch/hostile_probes.S): operations a kernel
// attacking its hypervisor would do, each with a way back for the test.
#include <stdint.h>
#include "arch/trap_frame.h"

extern "C" {
long hypercall_with_nt(unsigned number, uint64_t a1, uint64_t a2);
long hypercall_raw(uint64_t rax, uint64_t a1, uint64_t a2, uint64_t a3);
// context = {rip, cs, rflags, rsp, ss, rax}; -1 if the return worked (rip must be
// probe_iret_landing), else (vector << 16 | error code) of the exception it raised.
long probe_iret_on(uint64_t stack, const uint64_t* context);
long probe_int3_on(uint64_t stack);
// Raw wrmsr / rdmsr from the guest kernel: 0, or (vector << 16 | error code) of the fault.
long probe_wrmsr(uint32_t msr, uint64_t value);
long probe_rdmsr(uint32_t msr, uint64_t* value);
// Raw cli / sti: 0, or (vector << 16 | error code) of the fault.
long probe_cli();
long probe_sti();
// Raw wbinvd: 0, or (vector << 16 | error code) of the fault.
long probe_wbinvd();
// Xen's forced-emulation CPUID: 0 with out[] = eax, ebx, ecx, edx, or (vector << 16 | error
// code); and the prefix before a nop, which stays #UD.
long probe_forced_cpuid(uint32_t leaf, uint32_t subleaf, uint32_t out[4]);
long probe_forced_not_cpuid();
// Raw mov from CR0 / CR3 / CR4 and to CR0 / CR4: 0, or (vector << 16 | error code).
long probe_read_cr(unsigned cr, uint64_t* value);
long probe_write_cr(unsigned cr, uint64_t value);
// `int $n` from the kernel: kSoftwareInterruptDelivered (kernel/process/software_interrupts.h) when
// the trap table's handler ran, or (vector << 16 | error code) of the #GP.
long probe_int_0x80();
long probe_int_0x81();
long probe_int_0x90();
long probe_int_0x91();
// Raw mov from / to DR0-DR7, and DR8 (dr = 8, REX.R): 0, or (vector << 16 | error code)
// (arch/debugreg_probes.S).
long probe_read_dr(unsigned dr, uint64_t* value);
long probe_write_dr(unsigned dr, uint64_t value);
extern char probe_iret_landing[];
}

namespace kernel {
// From the trap handler, for exceptions in kernel mode: true (and the frame redirected) if
// one of these probes raised it.
bool hostile_probe_fixup(TrapFrame& frame);
}  // namespace kernel
