/* pvhv_profile: a QEMU TCG plugin that counts, inside the timed windows of a benchmark, every
 * instruction executed per guest virtual address, and the events that explain a
 * hypervisor's cost: CR3 writes, invlpg, syscall instructions (from guest kernel and guest
 * user code) and entries into the hypervisor's address range that no syscall made (traps
 * and interrupts). bench/run_profile.py names the addresses and prints the tables.
 *
 * The window: /bench reads the hypervisor's counters (a system call) just before and just
 * after each timed window. `marker` is the guest kernel's handler of that call: the window
 * opens at the first user-mode instruction after the handler ran (the read itself, a sysctl
 * on ours, is not counted) and closes when the handler runs again. The same guest runs on
 * ours and on Xen 4.17, so the same marker works on both.
 *
 *   -plugin build/bench/libpvhv_profile.so,marker=0xffffffff80012345,out=/tmp/profile.txt
 *
 * A second mode measures what the machine does for a host's command (bench/run_toolstack_bench.py),
 * where it waits for the host in between: with control=DIR the host arms the window (it creates
 * DIR/arm); the window opens at the next execution of `open` (dom0's relay taking a request
 * frame) and closes at the first of `close` (the domU's first console write) or when the host
 * creates DIR/stop. Meanwhile dom0's relay loop polls for the host's bytes and the hypervisor
 * idles for as long as the host takes, so that code must not count. The `neutral` file gives
 * the guest code's roles by address range ("LOW HIGH wait|pass|inherit"), everything else is
 * work:
 *   wait     the relay loop's polling and sleeping: never counts;
 *   inherit  counts when the guest code that entered it is work (the hypercall stubs, the
 *            event and trap entries, the clock); the hypervisor's code is always inherit;
 *   pass     counts in a pass of the relay loop (from one `pass` to the next) that did work:
 *            the reading of request frames, which costs nothing when nothing came.
 * DIR/window.txt then has the counted instructions per address ("pc"), the others ("wait") and
 * the totals.
 *
 *   -plugin build/bench/libpvhv_profile.so,control=/tmp/w,open=0x..,close=0x..,pass=0x..,neutral=/tmp/w/neutral
 *
 * One vCPU (both hypervisors run the guest on one CPU here): the state below is global.
 */
#include <inttypes.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "qemu_plugin_abi.h"

__attribute__((visibility("default"))) int qemu_plugin_version = PVHV_QEMU_PLUGIN_VERSION;

enum site_kind { SITE_PLAIN, SITE_CR3_WRITE, SITE_INVLPG, SITE_SYSCALL, SITE_MARKER };

/* Control mode: guest code that works (counts, and makes its pass count), guest code of the
 * waiting loop (never counts), and code that counts when the guest code that entered it does
 * (the hypervisor's, and the guest's hypercall page: called by the code that asks). */
enum site_role { ROLE_WORK, ROLE_WAIT, ROLE_INHERIT, ROLE_PASS };

struct site {
  uint64_t vaddr;
  uint64_t count;
  enum site_kind kind;
  /* control mode: this pass's count (not yet counted or waiting), the waiting total, whether
   * the site is on the pass's list, whether it leaves a pass waiting */
  uint64_t pending, waiting;
  bool touched;
  enum site_role role;
};

/* Sites by address (open addressing; a retranslated instruction finds its site again). */
#define SITE_SLOTS (1u << 21)
static struct site** sites;
static uint64_t site_count;

static uint64_t marker = ~0ull;
static const char* out_path = "pvhv_profile.txt";
static uint64_t hypervisor_low = 0xffff800000000000ull, hypervisor_high = 0xffff880000000000ull;
static const uint64_t user_high = 0x0000800000000000ull;

static bool active, opening;
static uint64_t windows, instructions, cr3_writes, invlpgs, kernel_syscalls, user_syscalls, traps;
static bool previous_in_hypervisor, previous_was_syscall;

static void write_profile(void);

static bool in_hypervisor(uint64_t vaddr) { return vaddr >= hypervisor_low && vaddr < hypervisor_high; }

/* ---- control mode ---- */
#define MAX_NEUTRAL 256
static const char* control_dir;
static uint64_t open_at = ~0ull, close_at = ~0ull, pass_at = ~0ull;
static struct {
  uint64_t low, high;
  enum site_role role;
} neutral[MAX_NEUTRAL];
static int neutral_count;
static volatile int arm_requested, stop_requested;
static bool armed, window_open, pass_works, entered_by_work;
static struct site** pass_sites;
static size_t pass_size, pass_room;
static uint64_t counted, waiting, passes_counted, passes_waiting, pass_instructions;

static enum site_role role_of(uint64_t vaddr) {
  if (in_hypervisor(vaddr)) return ROLE_INHERIT;
  for (int i = 0; i < neutral_count; ++i)
    if (vaddr >= neutral[i].low && vaddr < neutral[i].high) return neutral[i].role;
  return ROLE_WORK;
}

static void control_path(char* buffer, size_t size, const char* name) {
  snprintf(buffer, size, "%s/%s", control_dir, name);
}

/* The host's requests, as files in DIR (seen within 10 ms): the vCPU thread acts on them. */
static void* watch_control(void* unused) {
  (void)unused;
  char arm[4096], stop[4096];
  control_path(arm, sizeof(arm), "arm");
  control_path(stop, sizeof(stop), "stop");
  for (;;) {
    if (access(arm, F_OK) == 0 && unlink(arm) == 0) arm_requested = 1;
    if (access(stop, F_OK) == 0 && unlink(stop) == 0) stop_requested = 1;
    usleep(10000);
  }
  return NULL;
}

/* Ends the current pass: its sites' counts go to the counted or the waiting side. */
static void end_pass(void) {
  for (size_t i = 0; i < pass_size; ++i) {
    struct site* s = pass_sites[i];
    if (pass_works)
      s->count += s->pending;
    else
      s->waiting += s->pending;
    s->pending = 0;
    s->touched = false;
  }
  if (pass_works)
    counted += pass_instructions, ++passes_counted;
  else
    waiting += pass_instructions, ++passes_waiting;
  pass_size = 0;
  pass_instructions = 0;
  pass_works = false;
}

static void write_window(void) {
  char path[4096], partial[4096];
  control_path(path, sizeof(path), "window.txt");
  control_path(partial, sizeof(partial), "window.txt.part");
  FILE* out = fopen(partial, "w");
  if (out == NULL) return;
  fprintf(out, "counted %" PRIu64 "\nwaiting %" PRIu64 "\npasses_counted %" PRIu64 "\npasses_waiting %" PRIu64 "\n",
          counted, waiting, passes_counted, passes_waiting);
  for (uint64_t i = 0; i < SITE_SLOTS; ++i) {
    struct site* s = sites[i];
    if (s == NULL) continue;
    if (s->count) fprintf(out, "pc %" PRIx64 " %" PRIu64 "\n", s->vaddr, s->count);
    if (s->waiting) fprintf(out, "wait %" PRIx64 " %" PRIu64 "\n", s->vaddr, s->waiting);
  }
  fclose(out);
  rename(partial, path); /* the host sees a whole file or none */
}

static void reset_window(void) {
  for (uint64_t i = 0; i < SITE_SLOTS; ++i)
    if (sites[i] != NULL) sites[i]->count = sites[i]->waiting = sites[i]->pending = 0, sites[i]->touched = false;
  pass_size = 0;
  pass_instructions = counted = waiting = passes_counted = passes_waiting = 0;
  pass_works = false;
}

static void close_window(void) {
  end_pass();
  window_open = false;
  write_window();
}

static void executed_controlled(struct site* s) {
  if (arm_requested) {
    arm_requested = 0;
    reset_window();
    armed = true;
    window_open = false;
  }
  if (stop_requested) {
    stop_requested = 0;
    if (window_open) close_window();
    armed = false;
  }
  if (armed && !window_open && s->vaddr == open_at) {
    armed = false;
    window_open = true;
  }
  if (s->role == ROLE_WORK || s->role == ROLE_WAIT) entered_by_work = s->role == ROLE_WORK;
  if (!window_open) return;
  if (s->vaddr == pass_at) end_pass();
  if (s->role == ROLE_WORK) pass_works = true;
  if (!entered_by_work && s->role != ROLE_PASS) { /* the waiting loop's own, or the hypervisor's on its behalf */
    ++s->waiting;
    ++waiting;
    return;
  }
  if (!s->touched) {
    if (pass_size == pass_room) {
      size_t room = pass_room ? 2 * pass_room : 65536;
      struct site** grown = realloc(pass_sites, room * sizeof(*grown));
      if (grown == NULL) return; /* out of memory: the instruction goes uncounted */
      pass_sites = grown;
      pass_room = room;
    }
    pass_sites[pass_size++] = s;
    s->touched = true;
  }
  ++s->pending;
  ++pass_instructions;
  if (s->vaddr == close_at) close_window();
}

static bool read_neutral(const char* path) {
  FILE* in = fopen(path, "r");
  if (in == NULL) return false;
  char role[8];
  while (neutral_count < MAX_NEUTRAL && fscanf(in, "%" SCNx64 " %" SCNx64 " %7s", &neutral[neutral_count].low,
                                               &neutral[neutral_count].high, role) == 3) {
    neutral[neutral_count].role = role[0] == 'i' ? ROLE_INHERIT : role[0] == 'p' ? ROLE_PASS : ROLE_WAIT;
    ++neutral_count;
  }
  fclose(in);
  return true;
}

/* What an instruction is, from its bytes: legacy and REX prefixes skipped, then 0f 22 /3
 * (mov to cr3), 0f 01 /7 with a memory operand (invlpg), 0f 05 (syscall). */
static enum site_kind classify(const uint8_t* bytes, size_t size) {
  size_t i = 0;
  while (i < size && (bytes[i] == 0x66 || bytes[i] == 0x67 || bytes[i] == 0xf2 || bytes[i] == 0xf3 ||
                      bytes[i] == 0x2e || bytes[i] == 0x3e || bytes[i] == 0x26 || bytes[i] == 0x36 ||
                      bytes[i] == 0x64 || bytes[i] == 0x65 || (bytes[i] & 0xf0) == 0x40))
    ++i;
  if (i + 1 >= size || bytes[i] != 0x0f) return SITE_PLAIN;
  uint8_t opcode = bytes[i + 1];
  if (opcode == 0x05) return SITE_SYSCALL;
  if (i + 2 >= size) return SITE_PLAIN;
  uint8_t modrm = bytes[i + 2], mod = modrm >> 6, reg = (modrm >> 3) & 7;
  if (opcode == 0x22 && reg == 3) return SITE_CR3_WRITE;
  if (opcode == 0x01 && reg == 7 && mod != 3) return SITE_INVLPG;
  return SITE_PLAIN;
}

static struct site* site_for(uint64_t vaddr, const uint8_t* bytes, size_t size) {
  uint64_t slot = (vaddr * 0x9e3779b97f4a7c15ull) >> 43;
  for (;; slot = (slot + 1) & (SITE_SLOTS - 1)) {
    struct site* s = sites[slot];
    if (s == NULL) break;
    if (s->vaddr == vaddr) return s;
  }
  if (site_count >= SITE_SLOTS / 2) return NULL; /* full: the address goes uncounted */
  struct site* s = calloc(1, sizeof(*s));
  if (s == NULL) return NULL;
  s->vaddr = vaddr;
  s->kind = vaddr == marker ? SITE_MARKER : classify(bytes, size);
  s->role = role_of(vaddr);
  sites[slot] = s;
  ++site_count;
  return s;
}

static void executed(unsigned int vcpu, void* userdata) {
  (void)vcpu;
  struct site* s = userdata;
  if (control_dir != NULL) {
    executed_controlled(s);
    return;
  }
  if (s->kind == SITE_MARKER) {
    if (active) {
      active = false;
      /* Written at every window's end too: a machine that is killed (Xen 4.17 cannot end it
       * by itself) runs no atexit. Outside the window, so nothing of it is counted. */
      write_profile();
    } else {
      opening = true;
    }
  }
  if (opening && s->vaddr < user_high) { /* back in /bench: the counter read is behind us */
    opening = false;
    active = true;
    ++windows;
  }
  bool hypervisor = in_hypervisor(s->vaddr);
  if (active) {
    ++s->count;
    ++instructions;
    if (hypervisor && !previous_in_hypervisor && !previous_was_syscall) ++traps;
    switch (s->kind) {
      case SITE_CR3_WRITE: ++cr3_writes; break;
      case SITE_INVLPG: ++invlpgs; break;
      case SITE_SYSCALL:
        if (s->vaddr < user_high)
          ++user_syscalls;
        else if (!hypervisor)
          ++kernel_syscalls;
        break;
      default: break;
    }
  }
  previous_in_hypervisor = hypervisor;
  previous_was_syscall = s->kind == SITE_SYSCALL;
}

static void translated(qemu_plugin_id_t id, struct qemu_plugin_tb* tb) {
  (void)id;
  size_t n = qemu_plugin_tb_n_insns(tb);
  for (size_t i = 0; i < n; ++i) {
    struct qemu_plugin_insn* insn = qemu_plugin_tb_get_insn(tb, i);
    struct site* s = site_for(qemu_plugin_insn_vaddr(insn), qemu_plugin_insn_data(insn), qemu_plugin_insn_size(insn));
    if (s != NULL) qemu_plugin_register_vcpu_insn_exec_cb(insn, executed, QEMU_PLUGIN_CB_NO_REGS, s);
  }
}

static void write_profile(void) {
  FILE* out = fopen(out_path, "w");
  if (out == NULL) return;
  fprintf(out,
          "windows %" PRIu64 "\ninstructions %" PRIu64 "\ncr3_writes %" PRIu64 "\ninvlpgs %" PRIu64
          "\nkernel_syscalls %" PRIu64 "\nuser_syscalls %" PRIu64 "\ntraps %" PRIu64 "\nsites %" PRIu64 "\n",
          windows, instructions, cr3_writes, invlpgs, kernel_syscalls, user_syscalls, traps, site_count);
  for (uint64_t i = 0; i < SITE_SLOTS; ++i)
    if (sites[i] != NULL && sites[i]->count)
      fprintf(out, "pc %" PRIx64 " %" PRIu64 "\n", sites[i]->vaddr, sites[i]->count);
  fclose(out);
}

static void finished(qemu_plugin_id_t id, void* userdata) {
  (void)id;
  (void)userdata;
  if (control_dir == NULL) write_profile();
}

static bool hex_argument(const char* arg, const char* name, uint64_t* value) {
  size_t length = strlen(name);
  if (strncmp(arg, name, length) != 0 || arg[length] != '=') return false;
  *value = strtoull(arg + length + 1, NULL, 16);
  return true;
}

__attribute__((visibility("default"))) int qemu_plugin_install(qemu_plugin_id_t id, const struct qemu_info_t* info,
                                                               int argc, char** argv) {
  (void)info;
  for (int i = 0; i < argc; ++i) {
    if (hex_argument(argv[i], "marker", &marker) || hex_argument(argv[i], "hypervisor_low", &hypervisor_low) ||
        hex_argument(argv[i], "hypervisor_high", &hypervisor_high) || hex_argument(argv[i], "open", &open_at) ||
        hex_argument(argv[i], "close", &close_at) || hex_argument(argv[i], "pass", &pass_at))
      continue;
    if (strncmp(argv[i], "control=", 8) == 0) {
      control_dir = argv[i] + 8;
      continue;
    }
    if (strncmp(argv[i], "neutral=", 8) == 0) {
      if (!read_neutral(argv[i] + 8)) {
        fprintf(stderr, "pvhv_profile: cannot read '%s'\n", argv[i] + 8);
        return -1;
      }
      continue;
    }
    if (strncmp(argv[i], "out=", 4) == 0) {
      out_path = argv[i] + 4;
      continue;
    }
    fprintf(stderr, "pvhv_profile: unknown argument '%s'\n", argv[i]);
    return -1;
  }
  sites = calloc(SITE_SLOTS, sizeof(*sites));
  if (sites == NULL) return -1;
  pthread_t watcher;
  if (control_dir != NULL && pthread_create(&watcher, NULL, watch_control, NULL) != 0) return -1;
  qemu_plugin_register_vcpu_tb_trans_cb(id, translated);
  qemu_plugin_register_atexit_cb(id, finished, NULL);
  return 0;
}
