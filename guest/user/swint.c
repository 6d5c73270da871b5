/* User-mode half of selftest=swint (guest/selftest/cpu/selftest_swint.cpp, which registers the
 * vectors, the sysenter callback and VMASST_TYPE_architectural_iopl first): run as init=/swint.
 * Each instruction runs in a child of its own; the parent prints
 *   swint: <check>: ok      or   swint: <check>: FAIL (got <what>)
 * and "swint: passed" (exit 0) or "swint: failed" (exit 1). As Xen 4.17 answers:
 *  - int $n from user mode is delivered when the trap table gives n DPL 3 (0x90), else the
 *    kernel gets #GP (0x91 has DPL 1, 0x81 DPL 0): SIGSEGV; int $0x80 reaches its handler
 *    whatever its DPL (left 0 by the selftest);
 *  - sysenter goes to the sysenter callback (which returns here, SYSEXIT's convention);
 *  - cli and outb are #GP at virtual IOPL 0 and 1 and complete at 3 (iopl(2), which under the
 *    architectural IOPL assist sets the IOPL of the frame the kernel returns with). */
#include <stdio.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#define DELIVERED 0x5157 /* kernel/process/software_interrupts.h */
#define SIGSEGV_STATUS (-11)

static int failures;

#define INT_N(name, n)                                                \
  static long name(void) {                                            \
    long rax = 0;                                                     \
    __asm__ volatile("int $" #n : "+a"(rax)::"rcx", "r11", "memory"); \
    return rax;                                                       \
  }
INT_N(int_0x80, 0x80)
INT_N(int_0x90, 0x90)
INT_N(int_0x91, 0x91)
INT_N(int_0x81, 0x81)

/* The callback resumes at rdx with the stack in rcx. */
static long do_sysenter(void) {
  long rax = 0;
  __asm__ volatile("lea 1f(%%rip), %%rdx\n\tmov %%rsp, %%rcx\n\tsysenter\n1:"
                   : "+a"(rax)::"rcx", "rdx", "r11", "memory");
  return rax;
}
static long do_cli(void) {
  __asm__ volatile("cli" ::: "memory");
  return DELIVERED;
}
static long do_outb(void) {
  __asm__ volatile("outb %%al, $0x80" ::"a"(0) : "memory");
  return DELIVERED;
}

/* The child's end: its exit status when it ran to the end (0: the instruction delivered or
 * completed), minus the signal that killed it. */
static int outcome(long (*run)(void)) {
  fflush(stdout);
  pid_t child = fork();
  if (child == 0) _exit(run() == DELIVERED ? 0 : 1);
  int status = 0;
  if (child < 0 || waitpid(child, &status, 0) != child) return 1000;
  return WIFSIGNALED(status) ? -WTERMSIG(status) : WEXITSTATUS(status);
}

static void check(const char* what, long (*run)(void), int expected) {
  int got = outcome(run);
  if (got == expected) {
    printf("swint: %s: ok\n", what);
  } else {
    printf("swint: %s: FAIL (got %s %d)\n", what, got < 0 ? "signal" : "exit", got < 0 ? -got : got);
    ++failures;
  }
  fflush(stdout);
}

static void set_iopl(int level) {
  long rc = syscall(SYS_iopl, level);
  printf("swint: iopl(%d): %s\n", level, rc == 0 ? "ok" : "FAIL");
  if (rc != 0) ++failures;
}

int main(void) {
  check("int $0x80 (DPL 0) from user mode is delivered (Xen's gate of its own for it)", int_0x80, 0);
  check("int $0x90 (DPL 3) from user mode is delivered", int_0x90, 0);
  check("int $0x91 (DPL 1) from user mode is #GP", int_0x91, SIGSEGV_STATUS);
  check("int $0x81 (DPL 0) from user mode is #GP", int_0x81, SIGSEGV_STATUS);
  check("sysenter from user mode reaches the sysenter callback", do_sysenter, 0);
  check("cli from user mode at virtual IOPL 0 is #GP", do_cli, SIGSEGV_STATUS);
  check("outb from user mode at virtual IOPL 0 is #GP", do_outb, SIGSEGV_STATUS);
  set_iopl(3);
  check("cli from user mode at virtual IOPL 3 completes", do_cli, 0);
  check("outb from user mode at virtual IOPL 3 completes", do_outb, 0);
  set_iopl(1);
  check("cli from user mode at virtual IOPL 1 is #GP", do_cli, SIGSEGV_STATUS);
  set_iopl(0);
  printf("swint: %s\n", failures ? "failed" : "passed");
  return failures ? 1 : 0;
}
