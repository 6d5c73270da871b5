/* Fork benchmarks for the PV MMU (in the spirit of lmbench's lat_proc, written from scratch):
 * how much a process creation costs in each way the guest kernel can write page tables.
 *
 *   fork_exit            fork; the child exits at once; the parent waits for it
 *   fork_execve          the child execve()s /bench_exit (which exits 0)
 *   fork_sh              the child runs /bin/sh -c /bench_exit
 *   dirtyN_fork_exit     the parent first writes to every page of N MB of anonymous memory,
 *                        so fork has N MB of writable entries to copy and write-protect
 *   pte_write            the kernel rewrites one page-table entry n times (system call 1001)
 *   mixed_fork           both patterns on the same tables: a copy-on-write storm over 16 MB the
 *                        parent keeps (one entry written per fault, sparse), then a dirty fork
 *                        (runs of entries write-protected and copied); both timed
 *
 * Every benchmark prints, with write(2) so that no stdio buffer is duplicated by fork:
 *   bench <name> iterations=<n> total_ns=<t> ns_per_op=<t/n>
 *   counters <name> page_faults=<d> emulations=<d> ... hypercalls=<d>   (or: unavailable)
 * and the run ends with "bench done". A benchmark that cannot run prints
 *   bench <name> failed <reason>       or      bench <name> unavailable
 * The structure of the output is the same whatever the page-table mode; only numbers differ.
 *
 * Time is CLOCK_MONOTONIC (the hypervisor's system time): under QEMU TCG with -icount it is
 * virtual time, one nanosecond per guest instruction, not hardware time.
 *
 * Options (all optional; the defaults run in well under a minute per mode under TCG):
 *   --scale F          multiply every iteration count (and the number of PTE writes) by F
 *   --iterations N     run every fork benchmark N times (after the scale)
 *   --set NAME=N       run benchmark NAME N times (pte_write: N writes)
 *   --only A,B,...     run only these benchmarks
 *   --warmup N         untimed iterations before each benchmark (default 2; 1 for dirty*)
 *   --pte-writes N     entries written by pte_write (default 200000: 1M emulated writes take
 *                      over a minute under TCG with -icount, and the average is the same)
 *   --exit-program P   what fork_execve and fork_sh run (default /bench_exit)
 *   --shell P          the shell of fork_sh (default /bin/sh)
 *   --marker ioperm    mark each iteration of a fork benchmark (warm-up ones too) and the end of
 *                      its last: the process takes and drops access to one I/O port, which a Xen
 *                      PV Linux turns into physdev_op (PHYSDEVOP_set_iobitmap) hypercalls, so a
 *                      hypervisor's trace shows where each iteration starts (xenalyze
 *                      --per-iteration). On a kernel without ioperm(2) it does nothing.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "pvhv.h"

enum { kPageSize = 4096, kMaxBenchmarks = 16 };

/* ---- output: whole lines through write(2) ---- */

static void emit(const char* format, ...) {
  char line[512];
  va_list args;
  va_start(args, format);
  int length = vsnprintf(line, sizeof(line) - 1, format, args);
  va_end(args);
  if (length < 0) return;
  if (length > (int)sizeof(line) - 2) length = (int)sizeof(line) - 2;
  line[length++] = '\n';
  for (int done = 0; done < length;) {
    ssize_t n = write(1, line + done, (size_t)(length - done));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    done += (int)n;
  }
}

/* ---- time and counters ---- */

static uint64_t now_ns(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

static int read_counters(struct pvhv_counters* out) {
  memset(out, 0, sizeof(*out));
  return syscall(PVHV_SYS_counters, out) == 0;
}

/* Sums of the counter deltas and the time of every timed window of one benchmark. */
struct measurement {
  uint64_t total_ns;
  struct pvhv_counters counters;
  int counters_ok;
};

struct window {
  struct pvhv_counters before;
  int counters_ok;
  uint64_t start;
};

static void window_open(struct window* w) {
  w->counters_ok = read_counters(&w->before);
  w->start = now_ns();
}

static void window_close(struct window* w, struct measurement* m) {
  uint64_t end = now_ns();
  struct pvhv_counters after;
  int ok = read_counters(&after) && w->counters_ok;
  m->total_ns += end - w->start;
  if (!ok) {
    m->counters_ok = 0;
    return;
  }
  m->counters.page_faults += after.page_faults - w->before.page_faults;
  m->counters.emulations += after.emulations - w->before.emulations;
  m->counters.unhooks += after.unhooks - w->before.unhooks;
  m->counters.rehooks += after.rehooks - w->before.rehooks;
  m->counters.revalidated += after.revalidated - w->before.revalidated;
  m->counters.flushes += after.flushes - w->before.flushes;
  m->counters.mmu_hypercalls += after.mmu_hypercalls - w->before.mmu_hypercalls;
  m->counters.hypercalls += after.hypercalls - w->before.hypercalls;
  m->counters.cr3_writes += after.cr3_writes - w->before.cr3_writes;
  m->counters.invlpgs += after.invlpgs - w->before.invlpgs;
  m->counters.guest_syscalls += after.guest_syscalls - w->before.guest_syscalls;
  m->counters.type_change_flushes += after.type_change_flushes - w->before.type_change_flushes;
}

/* The hypervisor checks every frame's counts against the page tables after each benchmark. */
static void audit(const char* name) {
  long mismatches = syscall(PVHV_SYS_audit);
  if (mismatches < 0)
    emit("audit %s unavailable", name);
  else if (mismatches == 0)
    emit("audit %s clean", name);
  else
    emit("audit %s mismatches=%ld", name, mismatches);
}

static void report(const char* name, uint64_t iterations, const struct measurement* m) {
  audit(name);
  emit("bench %s iterations=%llu total_ns=%llu ns_per_op=%.1f", name, (unsigned long long)iterations,
       (unsigned long long)m->total_ns, (double)m->total_ns / (double)iterations);
  if (!m->counters_ok) {
    emit("counters %s unavailable", name);
    return;
  }
  const struct pvhv_counters* c = &m->counters;
  emit(
      "counters %s page_faults=%llu emulations=%llu unhooks=%llu rehooks=%llu revalidated=%llu "
      "flushes=%llu mmu_hypercalls=%llu hypercalls=%llu cr3_writes=%llu invlpgs=%llu guest_syscalls=%llu "
      "type_change_flushes=%llu",
      name, (unsigned long long)c->page_faults, (unsigned long long)c->emulations, (unsigned long long)c->unhooks,
      (unsigned long long)c->rehooks, (unsigned long long)c->revalidated, (unsigned long long)c->flushes,
      (unsigned long long)c->mmu_hypercalls, (unsigned long long)c->hypercalls, (unsigned long long)c->cr3_writes,
      (unsigned long long)c->invlpgs, (unsigned long long)c->guest_syscalls,
      (unsigned long long)c->type_change_flushes);
}

/* ---- the operations ---- */

static const char* exit_program = "/bench_exit";
static const char* shell = "/bin/sh";
static char failure[160]; /* why the last operation failed */

static void fail(const char* what, int error) {
  snprintf(failure, sizeof(failure), "%s: %s (errno %d)", what, strerror(error), error);
}

/* Raw system calls: the cost measured is the kernel's fork, not a libc wrapper's. */
static long raw_fork(void) { return syscall(SYS_fork); }

static void child_exec(const char* path, char* const argv[]) {
  static char* const empty_environment[] = {NULL};
  syscall(SYS_execve, path, argv, empty_environment);
  syscall(SYS_exit_group, 127); /* execve failed: the parent sees status 127 */
  for (;;) {
  }
}

/* --marker ioperm: ioperm() on, then off, of the POST diagnostic port (never accessed). Linux
 * sets the task's I/O bitmap on the way back to user mode and invalidates it at once when the last
 * port is dropped: each is a PHYSDEVOP_set_iobitmap hypercall, nothing else in a fork loop calls
 * physdev_op, and no page-table work lies between the two. */
enum { kMarkerPort = 0x80 };
static int marker_ioperm = 0;

static void mark_iteration(void) {
  if (!marker_ioperm) return;
  syscall(SYS_ioperm, kMarkerPort, 1, 1);
  syscall(SYS_ioperm, kMarkerPort, 1, 0);
}

/* Forks; the child runs `child` (which never returns); the parent reaps it and checks that
 * it exited with status 0. */
static int fork_and_wait(void (*child)(void)) {
  long pid = raw_fork();
  if (pid < 0) {
    fail("fork", errno);
    return -1;
  }
  if (pid == 0) {
    child();
    syscall(SYS_exit_group, 126);
  }
  int status = 0;
  long reaped;
  do {
    reaped = syscall(SYS_wait4, pid, &status, 0, NULL);
  } while (reaped < 0 && errno == EINTR);
  if (reaped != pid) {
    fail("wait4", reaped < 0 ? errno : ECHILD);
    return -1;
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    snprintf(failure, sizeof(failure), "child status 0x%x%s", status,
             WIFEXITED(status) && WEXITSTATUS(status) == 127 ? " (exit 127: execve failed or command not found)" : "");
    return -1;
  }
  return 0;
}

static void child_exit(void) { syscall(SYS_exit_group, 0); }

static void child_execve(void) {
  char* const argv[] = {(char*)exit_program, NULL};
  child_exec(exit_program, argv);
}

static void child_sh(void) {
  char* const argv[] = {"sh", "-c", (char*)exit_program, NULL};
  child_exec(shell, argv);
}

/* ---- dirty memory ---- */

static unsigned char* dirty_region;
static size_t dirty_bytes;
static unsigned char dirty_round;

static int dirty_map(size_t megabytes) {
  dirty_bytes = megabytes << 20;
  void* p = mmap(NULL, dirty_bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) {
    fail("mmap", errno);
    dirty_bytes = 0;
    return -1;
  }
  dirty_region = p;
  return 0;
}

/* Writes to every page, so that every entry of the region is present and writable again
 * (after a fork, copy-on-write has made them read-only). Not timed. */
static void dirty_touch(void) {
  dirty_round++;
  for (size_t offset = 0; offset < dirty_bytes; offset += kPageSize)
    ((volatile unsigned char*)dirty_region)[offset] = dirty_round;
}

static void dirty_unmap(void) {
  if (dirty_bytes) munmap(dirty_region, dirty_bytes);
  dirty_region = NULL;
  dirty_bytes = 0;
}

/* ---- the benchmark table ---- */

struct benchmark {
  const char* name;
  void (*child)(void); /* NULL: pte_write */
  size_t dirty_mb;     /* 0: no dirty memory */
  uint64_t iterations; /* default */
  int selected;
  int touch_timed; /* re-dirtying the memory before each fork is part of the operation */
};

static struct benchmark benchmarks[] = {
    {"fork_exit", child_exit, 0, 200, 1, 0},
    {"fork_execve", child_execve, 0, 100, 1, 0},
    {"fork_sh", child_sh, 0, 50, 1, 0},
    {"dirty1_fork_exit", child_exit, 1, 40, 1, 0},
    {"dirty16_fork_exit", child_exit, 16, 10, 1, 0},
    {"dirty64_fork_exit", child_exit, 64, 4, 1, 0},
    {"pte_write", NULL, 0, 200000, 1, 0},
    /* After the first fork every page of the region is copy-on-write: re-dirtying it takes one
     * write fault per page, and the guest kernel writes one entry of the same few L1s per fault
     * (the child has exited: it makes the page writable again, or copies it). */
    {"mixed_fork", child_exit, 16, 8, 1, 1},
};
enum { kBenchmarks = sizeof(benchmarks) / sizeof(benchmarks[0]) };

static int warmup_override = -1;

static int run_fork_benchmark(const struct benchmark* b) {
  failure[0] = 0;
  if (b->dirty_mb && dirty_map(b->dirty_mb) != 0) {
    emit("bench %s failed %s", b->name, failure);
    return -1;
  }
  int warmup = warmup_override >= 0 ? warmup_override : (b->dirty_mb ? 1 : 2);
  for (int i = 0; i < warmup; i++) {
    if (b->dirty_mb) dirty_touch();
    mark_iteration();
    if (fork_and_wait(b->child) != 0) {
      emit("bench %s failed %s", b->name, failure);
      dirty_unmap();
      return -1;
    }
  }
  struct measurement m = {0, {0}, 1};
  struct window w;
  if (b->dirty_mb) {
    /* One window per fork: re-dirtying the memory between forks is not part of the cost,
     * except for mixed_fork, whose storm of single-entry writes it is. */
    for (uint64_t i = 0; i < b->iterations; i++) {
      if (!b->touch_timed) dirty_touch();
      mark_iteration();
      window_open(&w);
      if (b->touch_timed) dirty_touch();
      int status = fork_and_wait(b->child);
      window_close(&w, &m);
      if (status != 0) {
        emit("bench %s failed %s", b->name, failure);
        dirty_unmap();
        return -1;
      }
    }
  } else {
    window_open(&w);
    for (uint64_t i = 0; i < b->iterations; i++) {
      mark_iteration();
      if (fork_and_wait(b->child) != 0) {
        emit("bench %s failed %s", b->name, failure);
        return -1;
      }
    }
    window_close(&w, &m);
  }
  mark_iteration(); /* the end of the last iteration */
  dirty_unmap();
  report(b->name, b->iterations, &m);
  return 0;
}

static int run_pte_write(const struct benchmark* b) {
  uint64_t warm = b->iterations < 1000 ? b->iterations : 1000;
  if (syscall(PVHV_SYS_pte_bench, (unsigned long)warm) != 0) {
    if (errno == ENOSYS) {
      emit("bench %s unavailable", b->name);
      emit("counters %s unavailable", b->name);
      return 0;
    }
    fail("pte_bench", errno);
    emit("bench %s failed %s", b->name, failure);
    return -1;
  }
  struct measurement m = {0, {0}, 1};
  struct window w;
  window_open(&w);
  long status = syscall(PVHV_SYS_pte_bench, (unsigned long)b->iterations);
  int error = errno;
  window_close(&w, &m);
  if (status != 0) {
    fail("pte_bench", error);
    emit("bench %s failed %s", b->name, failure);
    return -1;
  }
  report(b->name, b->iterations, &m);
  return 0;
}

/* ---- options ---- */

static struct benchmark* find_benchmark(const char* name, size_t length) {
  for (int i = 0; i < kBenchmarks; i++)
    if (strlen(benchmarks[i].name) == length && strncmp(benchmarks[i].name, name, length) == 0) return &benchmarks[i];
  return NULL;
}

static int parse_count(const char* text, uint64_t* out) {
  char* end;
  errno = 0;
  unsigned long long value = strtoull(text, &end, 10);
  if (errno || end == text || *end || text[0] == '-' || value == 0) return -1;
  *out = value;
  return 0;
}

static int usage(const char* problem, const char* argument) {
  emit(
      "bench error %s '%s' (options: --scale F --iterations N --set NAME=N --only A,B "
      "--warmup N --pte-writes N --exit-program P --shell P --marker ioperm|none)",
      problem, argument ? argument : "");
  return 2;
}

static int parse_options(int argc, char** argv) {
  double scale = 1.0;
  uint64_t iterations = 0, pte_writes = 0;
  /* --set values are applied after the scale, so remember them. */
  uint64_t fixed[kBenchmarks] = {0};
  for (int i = 1; i < argc; i++) {
    const char* option = argv[i];
    const char* value = i + 1 < argc ? argv[i + 1] : NULL;
    if (strcmp(option, "--") == 0) continue;
    if (!value) return usage("missing value for", option);
    i++;
    if (strcmp(option, "--scale") == 0) {
      char* end;
      scale = strtod(value, &end);
      if (end == value || *end || !(scale > 0)) return usage("bad scale", value);
    } else if (strcmp(option, "--iterations") == 0) {
      if (parse_count(value, &iterations)) return usage("bad count", value);
    } else if (strcmp(option, "--pte-writes") == 0) {
      if (parse_count(value, &pte_writes)) return usage("bad count", value);
    } else if (strcmp(option, "--warmup") == 0) {
      char* end;
      long warm = strtol(value, &end, 10);
      if (end == value || *end || warm < 0 || warm > 1000) return usage("bad warmup", value);
      warmup_override = (int)warm;
    } else if (strcmp(option, "--set") == 0) {
      const char* equals = strchr(value, '=');
      struct benchmark* b = equals ? find_benchmark(value, (size_t)(equals - value)) : NULL;
      uint64_t count;
      if (!b) return usage("unknown benchmark in", value);
      if (parse_count(equals + 1, &count)) return usage("bad count", value);
      fixed[b - benchmarks] = count;
    } else if (strcmp(option, "--only") == 0) {
      for (int b = 0; b < kBenchmarks; b++) benchmarks[b].selected = 0;
      for (const char* p = value; *p;) {
        size_t length = strcspn(p, ",");
        struct benchmark* b = find_benchmark(p, length);
        if (!b) return usage("unknown benchmark in", value);
        b->selected = 1;
        p += length;
        if (*p == ',') p++;
      }
    } else if (strcmp(option, "--exit-program") == 0) {
      exit_program = value;
    } else if (strcmp(option, "--shell") == 0) {
      shell = value;
    } else if (strcmp(option, "--marker") == 0) {
      if (strcmp(value, "ioperm") == 0)
        marker_ioperm = 1;
      else if (strcmp(value, "none") == 0)
        marker_ioperm = 0;
      else
        return usage("unknown marker", value);
    } else {
      return usage("unknown option", option);
    }
  }
  for (int b = 0; b < kBenchmarks; b++) {
    struct benchmark* bench = &benchmarks[b];
    int is_pte = bench->child == NULL;
    if (is_pte && pte_writes) bench->iterations = pte_writes;
    double scaled = (double)bench->iterations * scale + 0.5;
    bench->iterations = scaled < 1 ? 1 : (uint64_t)scaled;
    if (!is_pte && iterations) bench->iterations = iterations;
    if (fixed[b]) bench->iterations = fixed[b];
  }
  return 0;
}

int main(int argc, char** argv) {
  char arguments[256] = "";
  for (int i = 1; i < argc; i++) {
    size_t used = strlen(arguments);
    snprintf(arguments + used, sizeof(arguments) - used, " %s", argv[i]);
  }
  emit("bench start pid=%d args=%d%s", (int)getpid(), argc - 1, arguments);
  int status = parse_options(argc, argv);
  if (status != 0) return status;
  int failures = 0;
  for (int i = 0; i < kBenchmarks; i++) {
    const struct benchmark* b = &benchmarks[i];
    if (!b->selected) continue;
    int result = b->child ? run_fork_benchmark(b) : run_pte_write(b);
    if (result != 0) failures++;
  }
  emit("bench done");
  return failures ? 1 : 0;
}
