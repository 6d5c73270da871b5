/* The guest kernel's system calls for hypervisor measurements (C, for musl programs and for
 * the kernel). Numbers above Linux's range, so no libc wrapper collides with them:
 *
 *   long syscall(PVHV_SYS_counters, struct pvhv_counters *out)
 *       0, or -ENOSYS when the hypervisor has no performance counters (HYPERVISOR_sysctl
 *       XEN_SYSCTL_perfc_op fails: Debian's Xen 4.17 is built without them).
 *       Counters are cumulative since boot; take differences.
 *   long syscall(PVHV_SYS_pte_bench, unsigned long n)
 *       the kernel writes one entry of a scratch L1 table n times through the current
 *       pte= mode (alternating read-only and writable mappings of one frame); returns 0.
 *   long syscall(PVHV_SYS_audit)
 *       the hypervisor audits every frame's reference and type counts against the page
 *       tables now; returns the number of frames that disagree (0: clean), or -ENOSYS.
 *   long syscall(PVHV_SYS_debugreg, PVHV_DEBUGREG_set, int reg, unsigned long value)
 *   long syscall(PVHV_SYS_debugreg, PVHV_DEBUGREG_get, int reg)
 *       HYPERVISOR_set_debugreg / get_debugreg on the kernel's vCPU, the hypervisor's answer
 *       returned as is (Linux's ptrace breakpoints, in one step): a user program arms its own
 *       breakpoints (init=/debugreg). The registers are the vCPU's, not the process's.
 */
#ifndef PVHV_H
#define PVHV_H

#include <stdint.h>

struct pvhv_counters {
  uint64_t page_faults;         /* pv_page_faults: #PF taken by the hypervisor for the guest */
  uint64_t emulations;          /* ptwr_emulations: page-table writes emulated */
  uint64_t unhooks;             /* ptwr_unhooks: L1 tables detached for writable pagetables */
  uint64_t rehooks;             /* ptwr_rehooks */
  uint64_t revalidated;         /* ptwr_revalidated: entries checked on reattach */
  uint64_t flushes;             /* tlb_flushes */
  uint64_t mmu_hypercalls;      /* mmu_update, mmuext_op, update_va_mapping (multicall entries too) */
  uint64_t hypercalls;          /* every hypercall */
  uint64_t cr3_writes;          /* CR3 loads: address-space switches and full TLB flushes */
  uint64_t invlpgs;             /* tlb_invlpgs: single-page invalidations */
  uint64_t guest_syscalls;      /* user system calls bounced to the guest kernel */
  uint64_t type_change_flushes; /* of flushes, those only because a frame changed type */
  uint64_t detaches;            /* ptwr_faults: L1 tables detached (unhooked or not) for writable pagetables */
};

#define PVHV_SYS_counters 1000
#define PVHV_SYS_pte_bench 1001
#define PVHV_SYS_audit 1002
#define PVHV_SYS_debugreg 1003
#define PVHV_DEBUGREG_set 0
#define PVHV_DEBUGREG_get 1

#endif
