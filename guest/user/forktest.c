/* Processes in the guest kernel: fork, copy-on-write, execve, sh -c, wait4 statuses, a
 * child's segfault, orphans. Runs as init (init=/forktest). Every check prints
 *   forktest: <check>: ok            or   forktest: <check>: FAIL (<why>)
 * and the run ends with "forktest: passed" (exit 0) or "forktest: failed" (exit 1).
 * Helper modes used by the exec checks: forktest --argv one two (exit 42 if argv is
 * exactly that), forktest --env (exit 43 if FOO=bar is in the environment).
 * forktest --stress-rounds N (as init: "init=/forktest -- --stress-rounds N") runs the stress
 * check N times, for a test that needs the guest to fork for longer (at most 1000). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "pvhv.h"

static int failures;
static volatile int global_value = 1000;

static void check(const char* what, int ok, const char* why) {
  if (ok) {
    printf("forktest: %s: ok\n", what);
  } else {
    printf("forktest: %s: FAIL (%s)\n", what, why);
    ++failures;
  }
  fflush(stdout);
}

/* Waits for `pid`; returns its status, or -1 with a note if wait4 failed. */
static int wait_for(pid_t pid) {
  int status = 0;
  pid_t got = waitpid(pid, &status, 0);
  if (got != pid) {
    printf("forktest: waitpid(%d) returned %d (errno %d)\n", (int)pid, (int)got, errno);
    return -1;
  }
  return status;
}

static int exited_with(int status, int code) { return status >= 0 && WIFEXITED(status) && WEXITSTATUS(status) == code; }

static void fork_exit_wait(void) {
  pid_t parent = getpid();
  int ok = 1;
  for (int i = 0; i < 10; ++i) {
    pid_t pid = fork();
    if (pid < 0) {
      ok = 0;
      break;
    }
    if (pid == 0) _exit(getppid() == parent ? i : 100);
    int status = wait_for(pid);
    if (!exited_with(status, i)) {
      printf("forktest: child %d: status 0x%x, expected exit %d\n", (int)pid, status, i);
      ok = 0;
    }
  }
  check("fork+exit+wait x10 (exit codes, getppid)", ok, "wrong status");
}

static void many_children(void) {
  enum { kChildren = 8 };
  pid_t pids[kChildren];
  for (int i = 0; i < kChildren; ++i) {
    pids[i] = fork();
    if (pids[i] == 0) _exit(20 + i);
  }
  int ok = 1;
  /* Reap in reverse order of creation, by pid. */
  for (int i = kChildren - 1; i >= 0; --i) ok &= pids[i] > 0 && exited_with(wait_for(pids[i]), 20 + i);
  check("8 children alive at once, reaped by pid", ok, "wrong status");
  int status;
  check("wait4 without children: ECHILD", waitpid(-1, &status, 0) == -1 && errno == ECHILD, "no ECHILD");
}

static void copy_on_write(void) {
  enum { kSize = 1 << 20 };
  char* heap = malloc(kSize); /* mmap'd (large) */
  char* small = malloc(64);   /* brk heap */
  volatile char stack_buffer[256];
  memset(heap, 'p', kSize);
  strcpy(small, "parent");
  memset((char*)stack_buffer, 's', sizeof(stack_buffer));
  global_value = 1000;

  pid_t pid = fork();
  if (pid == 0) {
    /* The child sees the parent's data as it was at fork... */
    int ok = global_value == 1000 && heap[0] == 'p' && heap[kSize - 1] == 'p' && strcmp(small, "parent") == 0 &&
             stack_buffer[10] == 's';
    /* ...and its own writes stay its own. */
    global_value = 2000;
    memset(heap, 'c', kSize);
    strcpy(small, "child");
    stack_buffer[10] = 'c';
    ok = ok && global_value == 2000 && heap[kSize / 2] == 'c' && strcmp(small, "child") == 0;
    _exit(ok ? 0 : 1);
  }
  /* The parent writes before the child runs: the child must not see this either. */
  global_value = 3000;
  heap[4096] = 'P';
  int status = wait_for(pid);
  check("child sees the parent's memory as at fork and keeps its writes", exited_with(status, 0),
        "child saw wrong data");
  int ok = global_value == 3000 && heap[0] == 'p' && heap[kSize - 1] == 'p' && heap[4096] == 'P' &&
           strcmp(small, "parent") == 0 && stack_buffer[10] == 's';
  check("child writes do not leak into the parent", ok, "parent memory changed");
  /* After the child is gone, the parent is the frames' only user: writes just work. */
  memset(heap, 'q', kSize);
  check("parent writes after the child exited", heap[kSize - 1] == 'q', "lost write");
  free(heap);
  free(small);
}

static void nested(void) {
  pid_t pid = fork();
  if (pid == 0) {
    pid_t grandchild = fork();
    if (grandchild == 0) _exit(7);
    int status = wait_for(grandchild);
    _exit(WIFEXITED(status) ? WEXITSTATUS(status) + 1 : 99);
  }
  check("grandchild status through the child", exited_with(wait_for(pid), 8), "wrong status");

  /* An orphan is reparented to init (us, pid 1): we can reap it ourselves. */
  int fds_pid[1];
  pid = fork();
  if (pid == 0) {
    pid_t orphan = fork();
    if (orphan == 0) {
      /* Runs after its parent exited. */
      _exit(getppid() == 1 ? 9 : 10);
    }
    _exit(orphan > 0 ? 0 : 1);
  }
  fds_pid[0] = wait_for(pid);
  int status = 0;
  pid_t orphan = waitpid(-1, &status, 0);
  check("orphan reparented to init and reaped by it",
        exited_with(fds_pid[0], 0) && orphan > 0 && exited_with(status, 9), "orphan not seen");
}

static void nohang(void) {
  pid_t pid = fork();
  if (pid == 0) _exit(3);
  int status = 0;
  /* The child has not run yet (the parent keeps the CPU after fork). */
  pid_t got = waitpid(pid, &status, WNOHANG);
  check("WNOHANG with a live child returns 0", got == 0, "did not return 0");
  check("then the child is reaped", exited_with(wait_for(pid), 3), "wrong status");
}

static void execs(void) {
  pid_t pid = fork();
  if (pid == 0) {
    char* argv[] = {"hello", NULL};
    char* envp[] = {NULL};
    execve("/hello", argv, envp);
    _exit(126);
  }
  check("fork+execve /hello", exited_with(wait_for(pid), 0), "wrong status");

  pid = fork();
  if (pid == 0) {
    char* argv[] = {"forktest", "--argv", "one", "two", NULL};
    char* envp[] = {"FOO=bar", NULL};
    execve("/bin/forktest", argv, envp);
    _exit(126);
  }
  check("execve passes argv", exited_with(wait_for(pid), 42), "wrong status");

  pid = fork();
  if (pid == 0) {
    char* argv[] = {"forktest", "--env", NULL};
    char* envp[] = {"A=1", "FOO=bar", NULL};
    execve("/bin/forktest", argv, envp);
    _exit(126);
  }
  check("execve passes envp", exited_with(wait_for(pid), 43), "wrong status");

  pid = fork();
  if (pid == 0) {
    execl("/bin/sh", "sh", "-c", "hello", (char*)NULL);
    _exit(126);
  }
  check("sh -c \"hello\"", exited_with(wait_for(pid), 0), "wrong status");

  pid = fork();
  if (pid == 0) {
    execl("/bin/sh", "sh", "-c", "forktest --argv one two", (char*)NULL);
    _exit(126);
  }
  check("sh -c \"forktest --argv one two\"", exited_with(wait_for(pid), 42), "wrong status");

  pid = fork();
  if (pid == 0) {
    execl("/bin/sh", "sh", "-c", "no-such-program", (char*)NULL);
    _exit(126);
  }
  check("sh -c with an unknown program exits 127", exited_with(wait_for(pid), 127), "wrong status");

  char* argv[] = {"nothing", NULL};
  check("execve of a missing file fails with ENOENT", execve("/no/such/file", argv, argv + 1) == -1 && errno == ENOENT,
        "no ENOENT");
}

static void segfault(void) {
  pid_t pid = fork();
  if (pid == 0) {
    *(volatile int*)0xdead000 = 1;
    _exit(0);
  }
  int status = wait_for(pid);
  check("child segfault: killed by signal 11", status >= 0 && WIFSIGNALED(status) && WTERMSIG(status) == 11,
        "wrong status");
  /* The parent is unharmed, and so is memory it shares with nobody. */
  global_value = 5;
  check("parent still runs after the child's fault", global_value == 5, "?");
}

static void memory_after_fork(void) {
  pid_t pid = fork();
  if (pid == 0) {
    char* region = mmap(NULL, 1 << 16, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (region == MAP_FAILED) _exit(1);
    memset(region, 1, 1 << 16);
    if (munmap(region, 1 << 16) != 0) _exit(2);
    char* before = (char*)syscall(SYS_brk, 0);
    char* after = (char*)syscall(SYS_brk, before + 65536);
    if (after != before + 65536) _exit(3);
    memset(before, 2, 65536);
    _exit(0);
  }
  check("mmap, munmap and brk in a child", exited_with(wait_for(pid), 0), "wrong status");
}

/* Many short-lived processes: page tables and frames must all come back (the kernel prints
 * its free-frame count at the start and at the end of init). */
static void stress(void) {
  int ok = 1;
  for (int i = 0; i < 100 && ok; ++i) {
    pid_t pid = fork();
    if (pid == 0) _exit(0);
    ok = exited_with(wait_for(pid), 0);
  }
  for (int i = 0; i < 10 && ok; ++i) {
    pid_t pid = fork();
    if (pid == 0) {
      execl("/bin/sh", "sh", "-c", "forktest --argv one two", (char*)NULL);
      _exit(126);
    }
    ok = exited_with(wait_for(pid), 42);
  }
  check("100 fork+exit and 10 fork+sh+exec", ok, "wrong status");
}

static void counters(void) {
  struct pvhv_counters before, after;
  long rc = syscall(PVHV_SYS_counters, &before);
  if (rc == 0) {
    syscall(PVHV_SYS_pte_bench, 100UL);
    rc = syscall(PVHV_SYS_counters, &after);
    printf(
        "forktest: counters: hypercalls %llu -> %llu, mmu_hypercalls %llu -> %llu, "
        "emulations %llu -> %llu\n",
        (unsigned long long)before.hypercalls, (unsigned long long)after.hypercalls,
        (unsigned long long)before.mmu_hypercalls, (unsigned long long)after.mmu_hypercalls,
        (unsigned long long)before.emulations, (unsigned long long)after.emulations);
    check("hypervisor counters grow", rc == 0 && after.hypercalls > before.hypercalls, "did not grow");
  } else {
    printf("forktest: counters: unavailable (%s)\n", errno == ENOSYS ? "ENOSYS" : "other error");
    check("hypervisor counters: 0 or ENOSYS", errno == ENOSYS, "unexpected error");
  }
  check("pte bench (1001) returns 0", syscall(PVHV_SYS_pte_bench, 1000UL) == 0, "failed");
}

int main(int argc, char** argv) {
  if (argc >= 2 && strcmp(argv[1], "--argv") == 0) {
    return argc == 4 && strcmp(argv[2], "one") == 0 && strcmp(argv[3], "two") == 0 ? 42 : 1;
  }
  if (argc >= 2 && strcmp(argv[1], "--env") == 0) {
    const char* foo = getenv("FOO");
    return foo != NULL && strcmp(foo, "bar") == 0 ? 43 : 1;
  }
  int stress_rounds = 1;
  if (argc >= 3 && strcmp(argv[1], "--stress-rounds") == 0) {
    stress_rounds = atoi(argv[2]);
    if (stress_rounds < 1 || stress_rounds > 1000) {
      printf("forktest: --stress-rounds %s: not in 1..1000\n", argv[2]);
      return 2;
    }
  }
  printf("forktest: pid %d, ppid %d\n", (int)getpid(), (int)getppid());
  fork_exit_wait();
  many_children();
  copy_on_write();
  nested();
  nohang();
  execs();
  segfault();
  memory_after_fork();
  for (int round = 0; round < stress_rounds; ++round) stress();
  counters();
  /* Nothing may be left to reap. */
  int status;
  check("no children left", waitpid(-1, &status, WNOHANG) == -1 && errno == ECHILD, "leftovers");
  printf("forktest: %s\n", failures == 0 ? "passed" : "failed");
  return failures == 0 ? 0 : 1;
}
