/*
 * A domU's whole life through Debian's own <xenctrl.h> and our libraries (libxenctrl over the
 * dom0 relay, the PV builder of pvhv_xenguest.h): create, build from a kernel image and an
 * initrd, unpause, watch it run (its console ring and the domain's state), see it shut down,
 * destroy it, and find the hypervisor's free memory back where it was. Around that: hostile
 * inputs (a truncated, a non-ELF and a too-large kernel, populating beyond max_mem, destroying
 * dom0, a domctl whose buffer does not exist, max_vcpus other than createdomain's), each with
 * Xen 4.17's error and nothing leaked; lasting mappings of the domain's frames in dom0 (a
 * backend's hold on its rings: pvhv_xc_foreign_map), with the relay's refusals and limits, a
 * held frame that cannot be pinned, and a destroyed domain that stays dying until dom0 lets go
 * of it; and a short create/destroy loop.
 * tests/integration/toolstack/test_guest_xenctrl_domu.py runs it on Xen 4.17 and on ours.
 *
 *   xc_domu_lifecycle --kernel K --ramdisk R [--cmdline C] [--memory-mb N] [--cycles N]
 *                     [--bench [--builds N]: only N create/build/destroy rounds, then the cycles]
 *                     [--timeout-s N] [--require-console TEXT] [--layout] [--skip-run]
 *                     [--shutdown]
 *
 * --layout: after building, print the domain's start of day as the guest will see it (its
 *   start_info page, its page-table tree, vCPU 0's context), read back from its memory, with
 *   machine frames turned into the guest's own pfns: "xc_domu: layout: ..." lines, the same on
 *   any hypervisor that runs the same builder (test_guest_xenctrl_layout.py compares them).
 * --require-console: the text must appear on the domU's console ring (else it is only printed).
 * Prints "xc_domu: <check>: ok|FAIL ..." per check, then passed or failed.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <xenctrl.h>
#include <xenctrl_pvhv.h>
#include <pvhv_xenguest.h>
#include <xen/io/console.h>

static int failures;

#define CHECK(cond, ...)                                      \
  do {                                                        \
    int ok_ = (cond);                                         \
    int err_ = errno;                                         \
    printf("xc_domu: " __VA_ARGS__);                          \
    if (ok_)                                                  \
      printf(": ok\n");                                       \
    else {                                                    \
      printf(": FAIL (errno %d %s)\n", err_, strerror(err_)); \
      failures++;                                             \
    }                                                         \
    fflush(stdout);                                           \
  } while (0)

struct options {
  const char *kernel, *ramdisk, *cmdline, *require_console;
  unsigned memory_mb, cycles, timeout_s, builds;
  int layout, skip_run, shutdown, bench;
};

struct blob {
  unsigned char* data;
  size_t size;
};

static struct blob read_file(const char* path) {
  struct blob b = {NULL, 0};
  FILE* f = fopen(path, "rb");
  if (!f) return b;
  fseek(f, 0, SEEK_END);
  long size = ftell(f);
  fseek(f, 0, SEEK_SET);
  b.data = malloc(size > 0 ? (size_t)size : 1);
  b.size = fread(b.data, 1, (size_t)size, f);
  fclose(f);
  return b;
}

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + t.tv_nsec / 1e9;
}

static uint64_t free_pages(xc_interface* xch) {
  xc_physinfo_t info;
  memset(&info, 0, sizeof(info));
  if (xc_physinfo(xch, &info) != 0) return 0;
  return info.free_pages;
}

/* Freed frames may come back a little after destroy (Xen frees the last ones from an RCU
 * callback): wait up to 10 s for free memory to reach `baseline`. */
static uint64_t settle_free_pages(xc_interface* xch, uint64_t baseline) {
  double until = now() + 10;
  uint64_t pages = free_pages(xch);
  while (pages != baseline && now() < until) {
    usleep(200 * 1000);
    pages = free_pages(xch);
  }
  return pages;
}

static int domain_exists(xc_interface* xch, uint32_t domid) {
  xc_dominfo_t info;
  return xc_domain_getinfo(xch, domid, 1, &info) == 1 && info.domid == domid;
}

/* libxl's order for a PV domain: createdomain (paused), max_vcpus, max_mem with its 1 MiB
 * slack, the memory map limit. */
static int create_domain(xc_interface* xch, uint32_t* domid, uint64_t memory_kb) {
  struct xen_domctl_createdomain config;
  pvhv_pv_createdomain_defaults(&config);
  *domid = 0;
  if (xc_domain_create(xch, domid, &config) != 0) return -1;
  if (xc_domain_max_vcpus(xch, *domid, 1) != 0) return -1;
  if (xc_domain_setmaxmem(xch, *domid, memory_kb + 1024) != 0) return -1;
  if (xc_domain_set_memmap_limit(xch, *domid, memory_kb + 1024) != 0) return -1;
  return 0;
}

/* A bad image: the builder refuses it with `expected_errno`, the domain is destroyed and
 * nothing is left behind. */
static void check_bad_image(xc_interface* xch, const char* what, const void* kernel, size_t size, uint64_t memory_kb,
                            const struct blob* ramdisk, int expected_errno, int expected_xc, uint64_t baseline) {
  uint32_t domid = 0;
  if (create_domain(xch, &domid, memory_kb) != 0) {
    CHECK(0, "%s: createdomain", what);
    return;
  }
  struct pvhv_pv_image image = {
      kernel, size, ramdisk ? ramdisk->data : NULL, ramdisk ? ramdisk->size : 0, "init=/forktest", memory_kb, 0, 0};
  struct pvhv_pv_built built;
  errno = 0;
  int rc = pvhv_build_pv_domain(xch, domid, &image, &built);
  CHECK(rc == -1 && errno == expected_errno && built.xc_error == expected_xc, "%s: refused (%s)", what, built.message);
  CHECK(xc_domain_destroy(xch, domid) == 0, "%s: d%u destroyed", what, domid);
  uint64_t after = settle_free_pages(xch, baseline);
  CHECK(after == baseline && !domain_exists(xch, domid), "%s: free pages back at %lu (now %lu)", what,
        (unsigned long)baseline, (unsigned long)after);
}

/* One mmuext_op on `frame` of `domid` (MMUEXT_PIN_L1_TABLE, MMUEXT_UNPIN_TABLE). */
static long mmuext_on(xc_interface* xch, uint32_t domid, unsigned cmd, uint64_t frame) {
  struct mmuext_op op;
  memset(&op, 0, sizeof(op));
  op.cmd = cmd;
  op.arg1.mfn = frame;
  return xc_mmuext_op(xch, &op, 1, domid);
}

/* Lasting mappings of `domid`'s (zeroed, untyped) frames: what the relay refuses, its limit per
 * domain, reads and writes through a mapping, handles that name none, and the hold itself: a
 * frame dom0 keeps mapped writable cannot be pinned (Xen's -EINVAL), one pinned cannot be mapped
 * writable. Every mapping is given back. */
static void check_mappings(xc_interface* xch, uint32_t domid, const xen_pfn_t* frames) {
  static const struct {
    uint32_t domid;
    const char* name;
  } refused[] = {{0, "dom0"}, {DOMID_SELF, "DOMID_SELF"}, {DOMID_XEN, "DOMID_XEN"}, {DOMID_IO, "DOMID_IO"}};
  uint32_t handle = 0, handles[8];
  for (unsigned i = 0; i < sizeof(refused) / sizeof(refused[0]); ++i) {
    errno = 0;
    CHECK(pvhv_xc_foreign_map(xch, refused[i].domid, frames[0], &handle) == -1 && errno == EPERM,
          "mapping a frame of %s for good: EPERM, refused by the relay", refused[i].name);
  }
  errno = 0;
  CHECK(pvhv_xc_foreign_map(xch, 30000, frames[0], &handle) == -1 && errno == ESRCH,
        "mapping a frame of a domain that does not exist: ESRCH");
  unsigned mapped = 0;
  for (; mapped < 8; ++mapped)
    if (pvhv_xc_foreign_map(xch, domid, frames[mapped], &handles[mapped]) != 0) break;
  CHECK(mapped == 8, "8 frames of d%u mapped for good: %u", domid, mapped);
  errno = 0;
  CHECK(pvhv_xc_foreign_map(xch, domid, frames[8], &handle) == -1 && errno == ENOSPC,
        "a ninth of the same domain: ENOSPC (8 per domain)");
  if (mapped == 0) return;
  const char text[8] = "ringbuf";
  char back[8] = {0};
  CHECK(pvhv_xc_mapped_write(xch, handles[0], 4088, text, 8) == 0 &&
            pvhv_xc_mapped_read(xch, handles[0], 4088, back, 8) == 0 && memcmp(text, back, 8) == 0,
        "written and read back through the mapping");
  memset(back, 0, sizeof(back));
  CHECK(pvhv_xc_foreign_read(xch, domid, frames[0], 4088, back, 8) == 0 && memcmp(text, back, 8) == 0,
        "the same bytes in the frame itself");
  errno = 0;
  CHECK(pvhv_xc_mapped_read(xch, handles[0], 4090, back, 8) == -1 && errno == EINVAL, "a read past the frame: EINVAL");
  errno = 0;
  CHECK(mmuext_on(xch, domid, MMUEXT_PIN_L1_TABLE, frames[1]) == -1 && errno == EINVAL,
        "pinning a frame dom0 holds mapped writable as an L1: EINVAL");
  const char zero[8] = {0};
  pvhv_xc_mapped_write(xch, handles[0], 4088, zero, 8);
  for (unsigned i = 0; i < mapped; ++i) pvhv_xc_foreign_unmap(xch, handles[i]);
  CHECK(mmuext_on(xch, domid, MMUEXT_PIN_L1_TABLE, frames[1]) == 0, "once unmapped, the same frame pins as an L1");
  errno = 0;
  CHECK(pvhv_xc_foreign_map(xch, domid, frames[1], &handle) == -1 && errno == EBUSY,
        "a pinned L1 cannot be mapped for good (writable): EBUSY");
  CHECK(mmuext_on(xch, domid, MMUEXT_UNPIN_TABLE, frames[1]) == 0, "unpinned");
  errno = 0;
  CHECK(pvhv_xc_mapped_read(xch, handles[0], 0, back, 4) == -1 && errno == EBADF,
        "a read through an unmapped handle: EBADF");
  errno = 0;
  CHECK(pvhv_xc_foreign_unmap(xch, handles[0]) == -1 && errno == EBADF, "unmapping it again: EBADF");
  static const uint32_t bad[] = {0, 1, 0xff, 0x7f, 0xffffffffu, 0x12345678u};
  int refused_all = 1;
  for (unsigned i = 0; i < sizeof(bad) / sizeof(bad[0]); ++i) {
    errno = 0;
    refused_all &= pvhv_xc_mapped_write(xch, bad[i], 0, zero, 1) == -1 && errno == EBADF;
    refused_all &= pvhv_xc_foreign_unmap(xch, bad[i]) == -1 && errno == EBADF;
  }
  CHECK(refused_all, "writes and unmaps through 6 handles never handed out: EBADF");
}

static void check_hostile(xc_interface* xch, const struct options* o, const struct blob* kernel,
                          const struct blob* ramdisk, uint64_t baseline) {
  uint64_t memory_kb = (uint64_t)o->memory_mb << 10;
  /* The kernel cut after its headers: segments beyond the file. */
  check_bad_image(xch, "truncated kernel", kernel->data, kernel->size > 8192 ? 8192 : kernel->size / 2, memory_kb,
                  ramdisk, EINVAL, XC_INVALID_KERNEL, baseline);
  /* The initrd as the kernel: no ELF header. */
  check_bad_image(xch, "not an ELF kernel", ramdisk->data, ramdisk->size, memory_kb, NULL, EINVAL, XC_INVALID_KERNEL,
                  baseline);
  /* 1 MiB of memory for a kernel larger than that. */
  check_bad_image(xch, "kernel larger than memory", kernel->data, kernel->size, 1024, ramdisk, ENOMEM, XC_OUT_OF_MEMORY,
                  baseline);

  errno = 0;
  /* Refused by dom0's relay before any hypervisor sees it (a domctl on dom0 outside its
   * allow-list: guest/relay/server/relay_policy.cpp); Xen would answer EINVAL. */
  CHECK(xc_domain_destroy(xch, 0) == -1 && errno == EPERM, "destroying dom0 (itself): EPERM, refused by the relay");
  errno = 0;
  CHECK(xc_domain_setmaxmem(xch, 0, 1024) == -1 && errno == EPERM, "max_mem of dom0: EPERM, refused by the relay");
  CHECK(domain_exists(xch, 0), "dom0 still there");

  uint32_t domid = 0;
  if (create_domain(xch, &domid, 256) != 0) {
    CHECK(0, "createdomain for the populate checks");
    return;
  }
  errno = 0;
  CHECK(xc_domain_max_vcpus(xch, domid, 2) == -1 && errno == EINVAL, "max_vcpus 2 after createdomain's 1: EINVAL");
  /* max_mem 64 pages: a populate of 100 gets 64, the next one none. */
  CHECK(xc_domain_setmaxmem(xch, domid, 256) == 0, "d%u max_mem 256 KiB", domid);
  xen_pfn_t extents[100];
  for (unsigned i = 0; i < 100; ++i) extents[i] = i;
  int done = xc_domain_populate_physmap(xch, domid, 100, 0, 0, extents);
  CHECK(done == 64, "populate 100 pages beyond max_mem 64: %d done", done);
  xen_pfn_t one = 200;
  errno = 0;
  CHECK(xc_domain_populate_physmap_exact(xch, domid, 1, 0, 0, &one) == -1 && errno == EBUSY,
        "populate_exact beyond max_mem: EBUSY");
  xc_dominfo_t info;
  CHECK(xc_domain_getinfo(xch, domid, 1, &info) == 1 && info.nr_pages == 64, "d%u holds %lu pages", domid,
        (unsigned long)info.nr_pages);
  check_mappings(xch, domid, extents);
  /* A domctl pointing at a buffer that does not exist: the last page of the relay's buffer
   * window, which no buffer holds while fewer than 1024 pages are in use. */
  struct xen_domctl domctl;
  memset(&domctl, 0, sizeof(domctl));
  domctl.cmd = XEN_DOMCTL_setvcpucontext;
  domctl.domain = domid;
  domctl.u.vcpucontext.vcpu = 0;
  domctl.u.vcpucontext.ctxt.p = (vcpu_guest_context_t*)0xffffffffb43ff000ull;
  errno = 0;
  CHECK(xc_domctl(xch, &domctl) == -1 && errno == EFAULT, "setvcpucontext from a buffer that does not exist: EFAULT");
  /* Destroyed while dom0 holds one of its frames: dying until dom0 lets go, as a domain whose
   * rings a backend still maps on Xen. */
  uint32_t held = 0;
  CHECK(pvhv_xc_foreign_map(xch, domid, extents[9], &held) == 0, "a frame of d%u mapped for good", domid);
  errno = 0;
  CHECK(xc_domain_destroy(xch, domid) == 0, "d%u destroyed", domid);
  CHECK(xc_domain_getinfo(xch, domid, 1, &info) == 1 && info.domid == domid && info.dying,
        "d%u still listed, dying, while dom0 maps its frame", domid);
  CHECK(pvhv_xc_mapped_read(xch, held, 0, &one, sizeof(one)) == 0, "the mapping still reads");
  CHECK(pvhv_xc_foreign_unmap(xch, held) == 0, "unmapped");
  CHECK(!domain_exists(xch, domid), "d%u gone once dom0 let go", domid);
  errno = 0;
  CHECK(xc_domain_pause(xch, 0x7ff0) == -1 && errno == ESRCH, "pausing a domain that does not exist: ESRCH");
  uint32_t port = 0;
  errno = 0;
  CHECK(pvhv_xc_evtchn_bind_interdomain(xch, 30000, 1, &port) == -1 && errno == ESRCH,
        "binding a port of a domain that does not exist: ESRCH");
  uint64_t after = settle_free_pages(xch, baseline);
  CHECK(after == baseline, "after the populate checks: free pages back at %lu (now %lu)", (unsigned long)baseline,
        (unsigned long)after);
}

/* The console ring of start_info->console.domU, read as xenconsoled reads it: the indexes first,
 * then the bytes (the guest publishes its bytes before out_prod; one read of the whole page
 * copies out[] before out_prod and could take an index newer than its bytes). What was read is
 * consumed (out_cons written back) and appended to `text`. */
static void drain_console(xc_interface* xch, uint32_t domid, uint64_t mfn, char* text, size_t capacity, size_t* used) {
  struct xencons_interface ring;
  if (pvhv_xc_foreign_read(xch, domid, mfn, offsetof(struct xencons_interface, out_cons), &ring.out_cons,
                           2 * sizeof(ring.out_cons)) != 0)
    return;
  XENCONS_RING_IDX cons = ring.out_cons, prod = ring.out_prod;
  if (cons != prod &&
      pvhv_xc_foreign_read(xch, domid, mfn, offsetof(struct xencons_interface, out), ring.out, sizeof(ring.out)) != 0)
    return;
  if (prod - cons > sizeof(ring.out)) cons = prod - sizeof(ring.out); /* a bad index: take what the ring holds */
  for (; cons != prod; ++cons) {
    char c = ring.out[MASK_XENCONS_IDX(cons, ring.out)];
    putchar(c);
    if (*used + 1 < capacity) text[(*used)++] = c;
  }
  text[*used] = 0;
  fflush(stdout);
  pvhv_xc_foreign_write(xch, domid, mfn, offsetof(struct xencons_interface, out_cons), &cons, sizeof(cons));
}

/* The guest-visible start of day, machine frames turned into pfns through the guest's p2m. */
struct frames {
  uint64_t* p2m;
  uint64_t pages;
};

static long pfn_of(const struct frames* f, uint64_t mfn) {
  for (uint64_t pfn = 0; pfn < f->pages; ++pfn)
    if (f->p2m[pfn] == mfn) return (long)pfn;
  return -1;
}

static int read_frame(xc_interface* xch, uint32_t domid, uint64_t mfn, void* page) {
  return pvhv_xc_foreign_read(xch, domid, mfn, 0, page, 4096);
}

/* L4 slots 256..271 are the hypervisor's (HYPERVISOR_VIRT_START..END of 64-bit PV): Xen fills
 * them when a frame becomes an L4, its linear map among them (slot 258, the L4 itself). */
static int hypervisor_slot(int level, int index) { return level == 4 && index >= 256 && index < 272; }

static void dump_table(xc_interface* xch, uint32_t domid, const struct frames* f, uint64_t mfn, int level) {
  uint64_t entries[512];
  if (read_frame(xch, domid, mfn, entries) != 0) {
    CHECK(0, "layout: reading L%d table mfn %#lx", level, (unsigned long)mfn);
    return;
  }
  /* Runs of present entries pointing at consecutive guest pfns with the same flags, one line
   * each. Entries to frames outside the domain are the hypervisor's own (Xen writes its slots
   * into a PV guest's L4 when it becomes one): counted apart, they are no part of the layout. */
  int start = -1, foreign = 0;
  long first_pfn = 0, last_pfn = 0;
  uint64_t flags = 0;
  for (int i = 0; i <= 512; ++i) {
    int present = i < 512 && (entries[i] & 1);
    long pfn = present ? pfn_of(f, (entries[i] & 0x000ffffffffff000ull) >> 12) : -2;
    if (present && (pfn < 0 || hypervisor_slot(level, i))) {
      foreign++;
      present = 0;
    }
    uint64_t bits = present ? entries[i] & 0xfff0000000000fffull : 0;
    if (start >= 0 && present && pfn == last_pfn + 1 && bits == flags) {
      last_pfn = pfn;
      continue;
    }
    if (start >= 0)
      printf("xc_domu: layout: L%d pfn %ld [%d..%d] -> pfn %ld..%ld flags %#lx\n", level, pfn_of(f, mfn), start, i - 1,
             first_pfn, last_pfn, (unsigned long)flags);
    start = present ? i : -1;
    first_pfn = last_pfn = pfn;
    flags = bits;
  }
  if (foreign) printf("xc_domu: hypervisor entries: L%d pfn %ld: %d\n", level, pfn_of(f, mfn), foreign);
  if (level > 1)
    for (int i = 0; i < 512; ++i)
      if ((entries[i] & 1) && !hypervisor_slot(level, i) && pfn_of(f, (entries[i] & 0x000ffffffffff000ull) >> 12) >= 0)
        dump_table(xch, domid, f, (entries[i] & 0x000ffffffffff000ull) >> 12, level - 1);
}

/* The machine frame a guest virtual address maps to, through the guest's own page tables. */
static int walk(xc_interface* xch, uint32_t domid, uint64_t l4_mfn, uint64_t va, uint64_t* mfn) {
  uint64_t table = l4_mfn;
  for (int level = 4; level >= 1; --level) {
    uint64_t entry = 0;
    unsigned index = (unsigned)(va >> (12 + 9 * (level - 1))) & 511;
    if (pvhv_xc_foreign_read(xch, domid, table, index * 8, &entry, 8) != 0 || !(entry & 1)) return -1;
    table = (entry & 0x000ffffffffff000ull) >> 12;
  }
  *mfn = table;
  return 0;
}

static void dump_layout(xc_interface* xch, uint32_t domid, const struct pvhv_pv_built* b,
                        const vcpu_guest_context_any_t* ctx) {
  start_info_t si;
  if (pvhv_xc_foreign_read(xch, domid, b->start_info_mfn, 0, &si, sizeof(si)) != 0) {
    CHECK(0, "layout: start_info read back");
    return;
  }
  uint64_t l4 = ctx->x64.ctrlreg[3] >> 12;
  /* The p2m list as the guest finds it: at si.mfn_list, through its page tables. */
  struct frames f = {calloc(si.nr_pages, 8), si.nr_pages};
  int p2m_ok = f.p2m != NULL;
  for (uint64_t page = 0; p2m_ok && page * 512 < si.nr_pages; ++page) {
    uint64_t mfn, chunk[512];
    p2m_ok = walk(xch, domid, l4, si.mfn_list + page * 4096, &mfn) == 0 && read_frame(xch, domid, mfn, chunk) == 0;
    uint64_t count = si.nr_pages - page * 512 < 512 ? si.nr_pages - page * 512 : 512;
    if (p2m_ok) memcpy(f.p2m + page * 512, chunk, count * 8);
  }
  CHECK(p2m_ok, "layout: the p2m list read through the guest's page tables");
  if (!p2m_ok) {
    free(f.p2m);
    return;
  }
  printf("xc_domu: layout: start_info magic '%.32s' nr_pages %lu flags %#x\n", si.magic, (unsigned long)si.nr_pages,
         si.flags);
  printf("xc_domu: layout: start_info shared_info %s\n",
         pfn_of(&f, si.shared_info >> 12) < 0 && (si.shared_info & 0xfff) == 0 ? "a frame outside the p2m" : "BAD");
  printf("xc_domu: layout: start_info pt_base %#lx nr_pt_frames %lu mfn_list %#lx mod_start %#lx mod_len %lu\n",
         (unsigned long)si.pt_base, (unsigned long)si.nr_pt_frames, (unsigned long)si.mfn_list,
         (unsigned long)si.mod_start, (unsigned long)si.mod_len);
  printf(
      "xc_domu: layout: start_info store pfn %ld evtchn %u console pfn %ld evtchn %u first_p2m_pfn %lu "
      "nr_p2m_frames %lu\n",
      pfn_of(&f, si.store_mfn), si.store_evtchn, pfn_of(&f, si.console.domU.mfn), si.console.domU.evtchn,
      (unsigned long)si.first_p2m_pfn, (unsigned long)si.nr_p2m_frames);
  printf("xc_domu: layout: start_info cmd_line '%.1024s'\n", (const char*)si.cmd_line);
  const struct vcpu_guest_context_x86_64* c = &ctx->x64;
  printf("xc_domu: layout: vcpu0 rip %#lx rsp %#lx rsi %#lx rflags %#lx cr3 pfn %ld flags %#lx\n",
         (unsigned long)c->user_regs.rip, (unsigned long)c->user_regs.rsp, (unsigned long)c->user_regs.rsi,
         (unsigned long)c->user_regs.rflags, pfn_of(&f, l4), (unsigned long)c->flags);
  printf("xc_domu: layout: vcpu0 cs %#x ss %#x ds %#x es %#x fs %#x gs %#x kernel_ss %#lx kernel_sp %#lx\n",
         c->user_regs.cs, c->user_regs.ss, c->user_regs.ds, c->user_regs.es, c->user_regs.fs, c->user_regs.gs,
         (unsigned long)c->kernel_ss, (unsigned long)c->kernel_sp);
  CHECK(si.pt_base == b->pt_base_va && si.nr_pt_frames == b->pt_frames && si.mfn_list == b->p2m_va &&
            pfn_of(&f, si.console.domU.mfn) == (long)b->console_pfn &&
            pfn_of(&f, l4) * 4096 + b->virt_base == si.pt_base,
        "layout: start_info and cr3 as the builder planned");
  dump_table(xch, domid, &f, l4, 4);
  free(f.p2m);
}

static void run_domain(xc_interface* xch, const struct options* o, const struct blob* kernel,
                       const struct blob* ramdisk, uint64_t baseline) {
  uint64_t memory_kb = (uint64_t)o->memory_mb << 10;
  uint32_t domid = 0;
  CHECK(create_domain(xch, &domid, memory_kb) == 0, "createdomain + max_vcpus + max_mem + memmap: d%u", domid);
  if (failures) return;
  xc_dominfo_t info;
  CHECK(xc_domain_getinfo(xch, domid, 1, &info) == 1 && info.domid == domid && info.paused && !info.shutdown,
        "d%u exists, paused", domid);
  xen_domain_handle_t handle;
  for (unsigned i = 0; i < sizeof(handle); ++i) handle[i] = (uint8_t)(0xa0 + i);
  CHECK(xc_domain_sethandle(xch, domid, handle) == 0, "sethandle");
  struct pvhv_pv_image image = {kernel->data, kernel->size, ramdisk->data, ramdisk->size, o->cmdline, memory_kb, 0, 0};
  struct pvhv_pv_built built;
  double t0 = now();
  int rc = pvhv_build_pv_domain(xch, domid, &image, &built);
  CHECK(rc == 0, "built d%u from %s (%zu bytes) + %zu-byte ramdisk in %.1f s: %lu pages written%s%s", domid, o->kernel,
        kernel->size, ramdisk->size, now() - t0, (unsigned long)built.pages_written, rc ? ": " : "",
        rc ? built.message : "");
  if (rc != 0) {
    xc_domain_destroy(xch, domid);
    return;
  }
  printf(
      "xc_domu: built: %lu pages, start_info pfn %lu, console pfn %lu port %u, xenstore pfn %lu port %u, "
      "p2m at %#lx, %lu page-table frames at %#lx, boot stack pfn %lu, mapping ends %#lx\n",
      (unsigned long)built.total_pages, (unsigned long)built.start_info_pfn, (unsigned long)built.console_pfn,
      built.console_port, (unsigned long)built.xenstore_pfn, built.store_port, (unsigned long)built.p2m_va,
      (unsigned long)built.pt_frames, (unsigned long)built.pt_base_va, (unsigned long)built.boot_stack_pfn,
      (unsigned long)built.virt_pgtab_end);
  CHECK(xc_domain_getinfo(xch, domid, 1, &info) == 1 && info.nr_pages == built.total_pages &&
            info.max_memkb == memory_kb + 1024,
        "d%u holds its %lu pages, max %lu KiB", domid, (unsigned long)info.nr_pages, (unsigned long)info.max_memkb);
  vcpu_guest_context_any_t ctx;
  memset(&ctx, 0, sizeof(ctx));
  CHECK(xc_vcpu_getcontext(xch, domid, 0, &ctx) == 0 && ctx.x64.user_regs.rip == built.entry &&
            ctx.x64.user_regs.rsi == built.start_info_va && (ctx.x64.ctrlreg[3] >> 12) == built.l4_mfn,
        "vCPU 0's context reads back: rip %#lx rsi %#lx", (unsigned long)ctx.x64.user_regs.rip,
        (unsigned long)ctx.x64.user_regs.rsi);
  if (o->layout) dump_layout(xch, domid, &built, &ctx);
  if (o->skip_run) {
    CHECK(xc_domain_destroy(xch, domid) == 0, "d%u destroyed unrun", domid);
    return;
  }

  /* The console's port, bound in dom0 for the host as xenconsoled binds it: notified after
   * each read, so a domU waiting for room in the ring sees it. */
  uint32_t console_local = 0;
  CHECK(pvhv_xc_evtchn_bind_interdomain(xch, domid, built.console_port, &console_local) == 0,
        "console port %u bound in dom0 (port %u)", built.console_port, console_local);
  CHECK(xc_domain_unpause(xch, domid) == 0, "d%u unpaused", domid);
  static char console[65536];
  size_t used = 0;
  double until = now() + o->timeout_s;
  int ended = 0;
  while (now() < until) {
    size_t before = used;
    drain_console(xch, domid, built.console_mfn, console, sizeof(console), &used);
    if (used != before && console_local) pvhv_xc_evtchn_notify(xch, console_local);
    if (xc_domain_getinfo(xch, domid, 1, &info) != 1 || info.domid != domid) break;
    if (info.shutdown || info.crashed) {
      ended = 1;
      break;
    }
    usleep(500 * 1000);
  }
  drain_console(xch, domid, built.console_mfn, console, sizeof(console), &used);
  printf("xc_domu: console ring: %zu characters\n", used);
  CHECK(ended && info.shutdown && info.shutdown_reason == SHUTDOWN_poweroff,
        "d%u shut down within %u s: reason %u (poweroff: init exited with status 0)", domid, o->timeout_s,
        info.shutdown_reason);
  if (o->require_console)
    CHECK(strstr(console, o->require_console) != NULL, "the domU's console ring says '%s'", o->require_console);
  else
    printf("xc_domu: console ring %s '%s' (not required yet)\n",
           strstr(console, "init exited: status 0") ? "says" : "does not say", "init exited: status 0");
  xc_vcpuinfo_t vcpu;
  CHECK(xc_vcpu_getinfo(xch, domid, 0, &vcpu) == 0 && vcpu.cpu_time > 0, "vCPU 0 ran %lu ns",
        (unsigned long)vcpu.cpu_time);
  char ring[16384];
  unsigned int chars = sizeof(ring) - 1;
  if (xc_readconsolering(xch, ring, &chars, 0, 0, NULL) == 0) {
    ring[chars] = 0;
    printf("xc_domu: hypervisor console ring: %u characters\n", chars);
  }
  if (console_local) {
    CHECK(pvhv_xc_evtchn_close(xch, console_local) == 0, "dom0's console port closed");
    xc_evtchn_status_t status;
    memset(&status, 0, sizeof(status));
    status.dom = DOMID_SELF;
    status.port = console_local;
    CHECK(xc_evtchn_status(xch, &status) == 0 && status.status == EVTCHNSTAT_closed, "dom0's port %u is free again",
          console_local);
  }
  CHECK(xc_domain_destroy(xch, domid) == 0, "d%u destroyed", domid);
  CHECK(!domain_exists(xch, domid), "d%u gone", domid);
  uint64_t after = settle_free_pages(xch, baseline);
  CHECK(after == baseline, "free pages back at %lu (now %lu)", (unsigned long)baseline, (unsigned long)after);
}

/* dom0's event channels in use: its ports whose status is not closed, asked one by one until
 * the first port that does not exist (both answer for the ports of the buckets of 64 dom0 has:
 * one here; port 0, reserved, reads as closed on both), the first 256 at most: both hand out
 * the lowest free port, so a port left behind shows there. */
enum { kPortsCounted = 256 };
static int dom0_ports_in_use(xc_interface* xch) {
  int used = 0;
  for (evtchn_port_t port = 0; port < kPortsCounted; ++port) {
    xc_evtchn_status_t status;
    memset(&status, 0, sizeof(status));
    status.dom = DOMID_SELF;
    status.port = port;
    if (xc_evtchn_status(xch, &status) != 0) break;
    if (status.status != EVTCHNSTAT_closed) ++used;
  }
  return used;
}

static int domain_count(xc_interface* xch) {
  xc_domaininfo_t domains[64];
  return xc_domain_getinfolist(xch, 0, 64, domains);
}

/* Create, populate a little, connect an event channel between the domain and dom0, destroy,
 * close dom0's end: nothing may stay behind. After each cycle, the three counts against their
 * baseline: free pages, dom0's event channels in use, domains (each one a slot). */
static void check_cycles(xc_interface* xch, unsigned cycles, uint64_t baseline) {
  if (!cycles) return;
  int ports_baseline = dom0_ports_in_use(xch), domains_baseline = domain_count(xch);
  CHECK(ports_baseline > 0 && domains_baseline >= 1,
        "cycles: baseline %lu free pages, %d dom0 ports in use, %d domains", (unsigned long)baseline, ports_baseline,
        domains_baseline);
  double start = now();
  unsigned at_baseline = 0;
  for (unsigned i = 0; i < cycles; ++i) {
    uint32_t domid = 0, local = 0;
    int ok = create_domain(xch, &domid, 1024) == 0;
    xen_pfn_t extents[256];
    for (unsigned p = 0; p < 256; ++p) extents[p] = p;
    ok = ok && xc_domain_populate_physmap_exact(xch, domid, 256, 0, 0, extents) == 0;
    int remote = ok ? xc_evtchn_alloc_unbound(xch, domid, 0) : -1;
    ok = ok && remote >= 0 && pvhv_xc_evtchn_bind_interdomain(xch, domid, (uint32_t)remote, &local) == 0;
    ok = ok && xc_domain_destroy(xch, domid) == 0;
    ok = ok && pvhv_xc_evtchn_close(xch, local) == 0;
    uint64_t after = settle_free_pages(xch, baseline);
    int ports = dom0_ports_in_use(xch), domains = domain_count(xch);
    int clean =
        ok && after == baseline && ports == ports_baseline && domains == domains_baseline && !domain_exists(xch, domid);
    at_baseline += clean;
    CHECK(clean,
          "cycle %u: d%u created, 256 pages, port %d bound to dom0's %u, destroyed; free %lu, dom0 ports %d, "
          "domains %d",
          i + 1, domid, remote, local, (unsigned long)after, ports, domains);
  }
  printf("xc_domu: cycles: %u of %u at baseline (free pages %lu, dom0 ports %d, domains %d) in %.1f s\n", at_baseline,
         cycles, (unsigned long)baseline, ports_baseline, domains_baseline, now() - start);
}

/* make bench: `builds` domUs created, built (not run) and destroyed, each back at baseline; the
 * host's wall-clock time per build (the deterministic figure is dom0's, from its console). */
static void time_builds(xc_interface* xch, const struct options* o, const struct blob* kernel,
                        const struct blob* ramdisk, uint64_t baseline) {
  uint64_t memory_kb = (uint64_t)o->memory_mb << 10;
  double spent = 0;
  unsigned long pages = 0;
  for (unsigned i = 0; i < o->builds; ++i) {
    uint32_t domid = 0;
    double t0 = now();
    int ok = create_domain(xch, &domid, memory_kb) == 0;
    struct pvhv_pv_image image = {
        kernel->data, kernel->size, ramdisk->data, ramdisk->size, o->cmdline, memory_kb, 0, 0};
    struct pvhv_pv_built built;
    ok = ok && pvhv_build_pv_domain(xch, domid, &image, &built) == 0;
    ok = ok && xc_domain_destroy(xch, domid) == 0;
    spent += now() - t0;
    pages = ok ? (unsigned long)built.pages_written : 0;
    uint64_t after = settle_free_pages(xch, baseline);
    CHECK(ok && after == baseline, "build %u: d%u created, built (%lu pages written), destroyed; free %lu", i + 1,
          domid, pages, (unsigned long)after);
  }
  printf("xc_domu: builds: %u x create + build + destroy in %.2f s wall clock (%.3f s each)\n", o->builds, spent,
         spent / o->builds);
}

static int parse(int argc, char** argv, struct options* o) {
  memset(o, 0, sizeof(*o));
  o->cmdline = "init=/forktest";
  o->memory_mb = 32;
  o->timeout_s = 240;
  for (int i = 1; i < argc; ++i) {
    const char* a = argv[i];
    const char* v = i + 1 < argc ? argv[i + 1] : NULL;
    if (!strcmp(a, "--layout"))
      o->layout = 1;
    else if (!strcmp(a, "--skip-run"))
      o->skip_run = 1;
    else if (!strcmp(a, "--shutdown"))
      o->shutdown = 1;
    else if (!strcmp(a, "--bench"))
      o->bench = 1;
    else if (v && !strcmp(a, "--kernel"))
      o->kernel = argv[++i];
    else if (v && !strcmp(a, "--ramdisk"))
      o->ramdisk = argv[++i];
    else if (v && !strcmp(a, "--cmdline"))
      o->cmdline = argv[++i];
    else if (v && !strcmp(a, "--require-console"))
      o->require_console = argv[++i];
    else if (v && !strcmp(a, "--memory-mb"))
      o->memory_mb = (unsigned)atoi(argv[++i]);
    else if (v && !strcmp(a, "--cycles"))
      o->cycles = (unsigned)atoi(argv[++i]);
    else if (v && !strcmp(a, "--builds"))
      o->builds = (unsigned)atoi(argv[++i]);
    else if (v && !strcmp(a, "--timeout-s"))
      o->timeout_s = (unsigned)atoi(argv[++i]);
    else
      return -1;
  }
  return o->kernel && o->ramdisk ? 0 : -1;
}

int main(int argc, char** argv) {
  struct options o;
  if (parse(argc, argv, &o) != 0) {
    fprintf(stderr, "usage: %s --kernel K --ramdisk R [options] (see the source)\n", argv[0]);
    return 2;
  }
  setvbuf(stdout, NULL, _IOLBF, 0);
  struct blob kernel = read_file(o.kernel), ramdisk = read_file(o.ramdisk);
  if (!kernel.size || !ramdisk.size) {
    fprintf(stderr, "cannot read %s or %s\n", o.kernel, o.ramdisk);
    return 2;
  }
  xc_interface* xch = xc_interface_open(NULL, NULL, 0);
  if (!xch) {
    printf("xc_domu: xc_interface_open failed: %s\n", strerror(errno));
    return 1;
  }
  uint64_t baseline = free_pages(xch);
  CHECK(baseline > 0, "physinfo: %lu free pages at the start", (unsigned long)baseline);
  xc_domaininfo_t domains[16];
  int domains_at_start = xc_domain_getinfolist(xch, 0, 16, domains);
  if (!failures && o.bench) { /* make bench: builds and cycles only */
    if (o.builds) time_builds(xch, &o, &kernel, &ramdisk, baseline);
    check_cycles(xch, o.cycles, baseline);
  } else if (!failures) {
    if (!o.layout) check_hostile(xch, &o, &kernel, &ramdisk, baseline);
    run_domain(xch, &o, &kernel, &ramdisk, baseline);
    check_cycles(xch, o.cycles, baseline);
  }
  int domains_at_end = xc_domain_getinfolist(xch, 0, 16, domains);
  CHECK(domains_at_end == domains_at_start && domains_at_end >= 1, "%d domains at the end, as at the start",
        domains_at_end);
  if (o.shutdown) pvhv_xc_dom0_shutdown(xch, SHUTDOWN_poweroff);
  xc_interface_close(xch);
  printf("xc_domu: %s (%d failures)\n", failures ? "failed" : "passed", failures);
  return failures ? 1 : 0;
}
