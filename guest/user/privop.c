/* Privileged instructions from user mode, one per child process (linux/initramfs.py's
 * linux_init=privop on Debian's Linux; static musl, so it runs on any x86-64 kernel). Each
 * child prints where its instruction is, then executes it: no hypervisor emulates any of them
 * for guest user mode, so the guest kernel gets the fault (#GP, #UD for ud2) and kills the
 * child; the parent prints
 *   privop: <name> at 0x<rip>: signal <n>          or   privop: <name> at 0x<rip>: exit <n>
 * and, after all of them, "privop: done". tests/integration/linux/test_linux_domu_privop.py. */
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

#define INSTRUCTION(name, text)                                                                             \
  extern const char privop_##name[];                                                                        \
  static void run_##name(void) {                                                                            \
    __asm__ volatile(".globl privop_" #name "\nprivop_" #name ": " text ::: "rax", "rcx", "rdx", "memory"); \
  }

INSTRUCTION(hlt, "hlt")
INSTRUCTION(cli, "cli")
INSTRUCTION(in, "xor %%edx, %%edx; in %%dx, %%al")
INSTRUCTION(mov_cr0, "mov %%cr0, %%rax")
INSTRUCTION(rdmsr, "mov $0x10, %%ecx; rdmsr")
INSTRUCTION(wbinvd, "wbinvd")
INSTRUCTION(ud2, "ud2")

struct instruction {
  const char* name;
  const char* at;
  void (*run)(void);
};

int main(void) {
  /* Where the privileged instruction itself is: `in` and `rdmsr` start with a mov. */
  static const struct instruction all[] = {
      {"hlt", privop_hlt, run_hlt},           {"cli", privop_cli, run_cli},
      {"in", privop_in + 2, run_in},          {"mov_cr0", privop_mov_cr0, run_mov_cr0},
      {"rdmsr", privop_rdmsr + 5, run_rdmsr}, {"wbinvd", privop_wbinvd, run_wbinvd},
      {"ud2", privop_ud2, run_ud2},
  };
  for (unsigned i = 0; i < sizeof(all) / sizeof(all[0]); ++i) {
    fflush(stdout);
    pid_t child = fork();
    if (child == 0) {
      all[i].run();
      _exit(0);
    }
    int status = 0;
    if (child < 0 || waitpid(child, &status, 0) != child) {
      printf("privop: %s: fork or wait failed\n", all[i].name);
      return 1;
    }
    if (WIFSIGNALED(status))
      printf("privop: %s at %p: signal %d\n", all[i].name, (const void*)all[i].at, WTERMSIG(status));
    else
      printf("privop: %s at %p: exit %d\n", all[i].name, (const void*)all[i].at, WEXITSTATUS(status));
  }
  printf("privop: done\n");
  return 0;
}
