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
 * One vCPU (both hypervisors run the guest on one CPU here): the state below is global.
 */
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "qemu_plugin_abi.h"

__attribute__((visibility("default"))) int qemu_plugin_version = PVHV_QEMU_PLUGIN_VERSION;

enum site_kind { SITE_PLAIN, SITE_CR3_WRITE, SITE_INVLPG, SITE_SYSCALL, SITE_MARKER };

struct site {
  uint64_t vaddr;
  uint64_t count;
  enum site_kind kind;
};

/* Sites by address (open addressing; a retranslated instruction finds its site again). */
#define SITE_SLOTS (1u << 21)
static struct site **sites;
static uint64_t site_count;

static uint64_t marker = ~0ull;
static const char *out_path = "pvhv_profile.txt";
static uint64_t hypervisor_low = 0xffff800000000000ull, hypervisor_high = 0xffff880000000000ull;
static const uint64_t user_high = 0x0000800000000000ull;

static bool active, opening;
static uint64_t windows, instructions, cr3_writes, invlpgs, kernel_syscalls, user_syscalls, traps;
static bool previous_in_hypervisor, previous_was_syscall;

static void write_profile(void);

static bool in_hypervisor(uint64_t vaddr) { return vaddr >= hypervisor_low && vaddr < hypervisor_high; }

/* What an instruction is, from its bytes: legacy and REX prefixes skipped, then 0f 22 /3
 * (mov to cr3), 0f 01 /7 with a memory operand (invlpg), 0f 05 (syscall). */
static enum site_kind classify(const uint8_t *bytes, size_t size) {
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

static struct site *site_for(uint64_t vaddr, const uint8_t *bytes, size_t size) {
  uint64_t slot = (vaddr * 0x9e3779b97f4a7c15ull) >> 43;
  for (;; slot = (slot + 1) & (SITE_SLOTS - 1)) {
    struct site *s = sites[slot];
    if (s == NULL) break;
    if (s->vaddr == vaddr) return s;
  }
  if (site_count >= SITE_SLOTS / 2) return NULL; /* full: the address goes uncounted */
  struct site *s = calloc(1, sizeof(*s));
  if (s == NULL) return NULL;
  s->vaddr = vaddr;
  s->kind = vaddr == marker ? SITE_MARKER : classify(bytes, size);
  sites[slot] = s;
  ++site_count;
  return s;
}

static void executed(unsigned int vcpu, void *userdata) {
  (void)vcpu;
  struct site *s = userdata;
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
        if (s->vaddr < user_high) ++user_syscalls;
        else if (!hypervisor) ++kernel_syscalls;
        break;
      default: break;
    }
  }
  previous_in_hypervisor = hypervisor;
  previous_was_syscall = s->kind == SITE_SYSCALL;
}

static void translated(qemu_plugin_id_t id, struct qemu_plugin_tb *tb) {
  (void)id;
  size_t n = qemu_plugin_tb_n_insns(tb);
  for (size_t i = 0; i < n; ++i) {
    struct qemu_plugin_insn *insn = qemu_plugin_tb_get_insn(tb, i);
    struct site *s = site_for(qemu_plugin_insn_vaddr(insn), qemu_plugin_insn_data(insn), qemu_plugin_insn_size(insn));
    if (s != NULL) qemu_plugin_register_vcpu_insn_exec_cb(insn, executed, QEMU_PLUGIN_CB_NO_REGS, s);
  }
}

static void write_profile(void) {
  FILE *out = fopen(out_path, "w");
  if (out == NULL) return;
  fprintf(out, "windows %" PRIu64 "\ninstructions %" PRIu64 "\ncr3_writes %" PRIu64 "\ninvlpgs %" PRIu64
               "\nkernel_syscalls %" PRIu64 "\nuser_syscalls %" PRIu64 "\ntraps %" PRIu64 "\nsites %" PRIu64 "\n",
          windows, instructions, cr3_writes, invlpgs, kernel_syscalls, user_syscalls, traps, site_count);
  for (uint64_t i = 0; i < SITE_SLOTS; ++i)
    if (sites[i] != NULL && sites[i]->count) fprintf(out, "pc %" PRIx64 " %" PRIu64 "\n", sites[i]->vaddr, sites[i]->count);
  fclose(out);
}

static void finished(qemu_plugin_id_t id, void *userdata) {
  (void)id;
  (void)userdata;
  write_profile();
}

static bool hex_argument(const char *arg, const char *name, uint64_t *value) {
  size_t length = strlen(name);
  if (strncmp(arg, name, length) != 0 || arg[length] != '=') return false;
  *value = strtoull(arg + length + 1, NULL, 16);
  return true;
}

__attribute__((visibility("default"))) int qemu_plugin_install(qemu_plugin_id_t id, const struct qemu_info_t *info,
                                                              int argc, char **argv) {
  (void)info;
  for (int i = 0; i < argc; ++i) {
    if (hex_argument(argv[i], "marker", &marker) || hex_argument(argv[i], "hypervisor_low", &hypervisor_low) ||
        hex_argument(argv[i], "hypervisor_high", &hypervisor_high))
      continue;
    if (strncmp(argv[i], "out=", 4) == 0) {
      out_path = argv[i] + 4;
      continue;
    }
    fprintf(stderr, "pvhv_profile: unknown argument '%s'\n", argv[i]);
    return -1;
  }
  sites = calloc(SITE_SLOTS, sizeof(*sites));
  if (sites == NULL) return -1;
  qemu_plugin_register_vcpu_tb_trans_cb(id, translated);
  qemu_plugin_register_atexit_cb(id, finished, NULL);
  return 0;
}
