/* Attacks on the hypervisor from guest user mode (run as init=/hostile). Each check prints
 *   hostile: <check>: ok         or   hostile: <check>: FAIL (<why>)
 * and the run ends with "hostile: passed" (exit 0) or "hostile: failed" (exit 1). Whatever
 * happens, the hypervisor must keep running: these are the user-mode half of the
 * hostile-guest suite (tests/integration/hostile/test_guest_hostile.py). */
#include <signal.h>
#include <stdio.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

static int failures;

static void check(const char* what, int ok, long got) {
  if (ok) {
    printf("hostile: %s: ok\n", what);
  } else {
    printf("hostile: %s: FAIL (got %ld)\n", what, got);
    ++failures;
  }
  fflush(stdout);
}

/* A system call made with RFLAGS.NT set. The hypervisor's syscall entry must not run with
 * it (its return iretq would fault in ring 0); the guest gets its own flags back. */
static long syscall_with_nt(long number, int* nt_after) {
  long result;
  unsigned long flags;
  __asm__ volatile(
      "pushfq\n\t"
      "orq $0x4000, (%%rsp)\n\t"
      "popfq\n\t"
      "syscall\n\t"
      "pushfq\n\t"
      "popq %1\n\t"
      "pushfq\n\t"
      "andq $~0x4000, (%%rsp)\n\t"
      "popfq"
      : "=a"(result), "=r"(flags)
      : "a"(number)
      : "rcx", "r11", "memory");
  *nt_after = (flags & 0x4000) != 0;
  return result;
}

/* Switches to compatibility mode (FLAT_RING3_CS32) and executes `syscall` there with
 * eax = getpid. No syscall32 callback is registered by this kernel, so on Xen the guest takes
 * #UD (SIGILL). Should the hypervisor treat it as a 64-bit syscall and return in 64-bit mode,
 * the bytes after it run as 64-bit code: exit(77). */
static void compat_mode_syscall(void) {
  __asm__ volatile(
      "pushq $0xe023\n\t"
      "leaq 1f(%%rip), %%rax\n\t"
      "pushq %%rax\n\t"
      "movl $39, %%eax\n\t"
      "lretq\n\t"
      ".code32\n"
      "1: syscall\n\t"
      ".code64\n\t"
      "movl $60, %%eax\n\t"
      "movl $77, %%edi\n\t"
      "syscall\n\t" ::
          : "rax", "rdi", "rcx", "r11", "memory");
}

/* rdmsr / wrmsr from user mode: the hypervisor serves them only to a guest kernel (Xen's
 * emul-priv-op.c checks the guest's ring first), so each is a #GP the kernel turns into
 * SIGSEGV. Were either performed, the child would exit normally. */
static void user_rdmsr_mcg_status(void) {
  unsigned lo, hi;
  __asm__ volatile("rdmsr" : "=a"(lo), "=d"(hi) : "c"(0x17a));
}
static void user_wrmsr_gs_base(void) { __asm__ volatile("wrmsr" ::"c"(0xc0000101), "a"(0), "d"(0)); }

static void user_wbinvd(void) { __asm__ volatile("wbinvd" ::: "memory"); }

static int run_child(void (*body)(void)) {
  pid_t pid = fork();
  if (pid == 0) {
    body();
    _exit(0);
  }
  int status = 0;
  if (waitpid(pid, &status, 0) != pid) return -1;
  return status;
}

int main(void) {
  int nt_after = 0;
  long pid = syscall_with_nt(SYS_getpid, &nt_after);
  check("getpid with RFLAGS.NT set returns our pid", pid == getpid(), pid);
  check("  and the guest's NT comes back with it", nt_after == 1, nt_after);

  int status = run_child(compat_mode_syscall);
  check("a compat-mode syscall with no syscall32 callback is #UD (SIGILL)",
        WIFSIGNALED(status) && WTERMSIG(status) == SIGILL, status);

  status = run_child(user_rdmsr_mcg_status);
  check("rdmsr MCG_STATUS from user mode is #GP (SIGSEGV)", WIFSIGNALED(status) && WTERMSIG(status) == SIGSEGV, status);
  status = run_child(user_wrmsr_gs_base);
  check("wrmsr GS_BASE from user mode is #GP (SIGSEGV)", WIFSIGNALED(status) && WTERMSIG(status) == SIGSEGV, status);

  status = run_child(user_wbinvd);
  check("wbinvd from user mode is #GP (SIGSEGV)", WIFSIGNALED(status) && WTERMSIG(status) == SIGSEGV, status);

  printf("hostile: %s\n", failures ? "failed" : "passed");
  return failures ? 1 : 0;
}
