/* User-mode half of selftest=debugreg (guest/selftest/cpu/selftest_debugreg_traps.cpp does the same
 * from the kernel): run as init=/debugreg. Breakpoints are armed through the kernel
 * (PVHV_SYS_debugreg: HYPERVISOR_set_debugreg), each provoked in a child of its own, which the
 * kernel kills with SIGTRAP for the #DB it gets; the parent then reads DR6 as the hypervisor
 * left it and clears it. Prints
 *   debugreg: <check>: ok      or   debugreg: <check>: FAIL (got <what>)
 * and "debugreg: passed" (exit 0) or "debugreg: failed" (exit 1). As Xen 4.17 answers:
 *  - a data breakpoint on a user word and an instruction breakpoint on user code fire in user
 *    mode: #DB, with B0 / B1 in DR6;
 *  - XSA-260: `mov %ss` from a watched word, then `syscall` with the top bit of rsp flipped
 *    (XTF's PoC): on hardware the #DB waits for the hypervisor's syscall entry, running on that
 *    rsp; QEMU's TCG raises it at the syscall, still in user mode. Either way the hypervisor
 *    survives; under TCG both give the child SIGTRAP with B0 (what is asserted);
 *  - XSA-265: DR6.BD set (sticky), then `mov %ss; int3`: SIGTRAP, DR6 BD | B0 under TCG;
 *  - user addresses in DR0-3 are accepted, the hypervisor's are -EPERM, and with DR7 0
 *    nothing fires. */
#include <stdint.h>
#include <stdio.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include "pvhv.h"

#define DR6_DEFAULT 0xffff0ff0ul
#define B0 0x1ul
#define B1 0x2ul
#define BD 0x2000ul
#define SIGTRAP_STATUS (-5)
#define EPERM 1

static int failures;
static volatile uint64_t watched;
static volatile uint32_t watched_ss;

static long set_dr(int reg, unsigned long value) { return syscall(PVHV_SYS_debugreg, PVHV_DEBUGREG_set, reg, value); }
static long get_dr(int reg) { return syscall(PVHV_SYS_debugreg, PVHV_DEBUGREG_get, reg); }

/* DR7 with breakpoint n locally enabled, of type rw (0 execute, 1 write, 3 read/write) and
 * length field len (0: 1 byte, 1: 2, 3: 4, 2: 8). */
static unsigned long dr7_for(int n, unsigned rw, unsigned len) {
  return 0x400ul | (1ul << (2 * n)) | ((unsigned long)rw << (16 + 4 * n)) | ((unsigned long)len << (18 + 4 * n));
}

static void report(const char* what, long got, long expected) {
  if (got == expected) {
    printf("debugreg: %s: ok\n", what);
  } else {
    printf("debugreg: %s: FAIL (got %ld / 0x%lx, expected %ld / 0x%lx)\n", what, got, got, expected, expected);
    ++failures;
  }
  fflush(stdout);
}

/* The child's end: 0 if it ran to the end, minus the signal that killed it. */
static int outcome(void (*run)(void)) {
  fflush(stdout);
  pid_t child = fork();
  if (child == 0) {
    run();
    _exit(0);
  }
  int status = 0;
  if (child < 0 || waitpid(child, &status, 0) != child) return 1000;
  return WIFSIGNALED(status) ? -WTERMSIG(status) : WEXITSTATUS(status);
}

/* Runs `run` in a child and checks how it ended and what DR6 then reads; DR6 is reset. */
static void check_trap(const char* what, void (*run)(void), int expected_outcome, long expected_dr6) {
  report(what, outcome(run), expected_outcome);
  report("  DR6 after it", get_dr(6), (long)expected_dr6);
  report("  DR6 reset", set_dr(6, DR6_DEFAULT), 0);
}

static void store_watched(void) { watched = 1; }

static __attribute__((noinline)) int instruction_target(void) {
  __asm__ volatile("" ::: "memory");
  return 7;
}
static void call_target(void) {
  if (instruction_target() != 7) _exit(2);
}

/* XTF's XSA-260 PoC from user mode: the stack pointer's top bit flipped, `mov %ss` from the
 * watched word, `syscall` (getpid). Restored afterwards in case the #DB never comes. */
static void movss_syscall(void) {
  __asm__ volatile(
      "mov %%rsp, %%rbx\n\t"
      "btc $63, %%rsp\n\t"
      "mov %[ss], %%ss\n\t"
      "syscall\n\t"
      "mov %%rbx, %%rsp"
      : "+a"((long){SYS_getpid})
      : [ss] "m"(watched_ss)
      : "rbx", "rcx", "r11", "memory");
}

static void movss_int3(void) { __asm__ volatile("mov %[ss], %%ss\n\tint3" ::[ss] "m"(watched_ss) : "memory"); }

int main(void) {
  uint16_t ss = 0;
  __asm__ volatile("mov %%ss, %0" : "=r"(ss));
  watched_ss = ss;

  report("set_debugreg 0 to a user word", set_dr(0, (unsigned long)&watched), 0);
  report("set_debugreg 7: a write breakpoint on it", set_dr(7, dr7_for(0, 1, 2)), 0);
  check_trap("a store to it: SIGTRAP", store_watched, SIGTRAP_STATUS, DR6_DEFAULT | B0);

  report("set_debugreg 1 to user code", set_dr(1, (unsigned long)instruction_target), 0);
  report("set_debugreg 7: an instruction breakpoint on it", set_dr(7, dr7_for(1, 0, 0)), 0);
  check_trap("a call of it: SIGTRAP", call_target, SIGTRAP_STATUS, DR6_DEFAULT | B1);

  report("set_debugreg 0 to the word mov %ss reads", set_dr(0, (unsigned long)&watched_ss), 0);
  report("set_debugreg 7: a read/write breakpoint on it", set_dr(7, dr7_for(0, 3, 3)), 0);
  check_trap("XSA-260: mov %ss; syscall on a non-canonical rsp: SIGTRAP under TCG", movss_syscall, SIGTRAP_STATUS,
             DR6_DEFAULT | B0);
  report("XSA-265: set_debugreg 6 with BD", set_dr(6, DR6_DEFAULT | BD), 0);
  check_trap("XSA-265: mov %ss; int3: SIGTRAP", movss_int3, SIGTRAP_STATUS, DR6_DEFAULT | BD | B0);

  report("set_debugreg 2 in the hypervisor's range: -EPERM", set_dr(2, 0xffff82d080000000ul), -EPERM);
  report("set_debugreg 7 0", set_dr(7, 0), 0);
  check_trap("with DR7 0 a store runs to the end", store_watched, 0, DR6_DEFAULT);
  report("set_debugreg 0 back to 0", set_dr(0, 0), 0);
  report("set_debugreg 1 back to 0", set_dr(1, 0), 0);

  printf("debugreg: %s\n", failures ? "failed" : "passed");
  return failures ? 1 : 0;
}
