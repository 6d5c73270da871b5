/*
 * A program written against Debian's own <xenctrl.h>, as any Xen tool is: it opens the
 * interface, asks the hypervisor's version in every form, drives the trace buffers, and asks
 * for the information sysctls. Linked with our -lxenctrl it runs over the dom0 relay, on our
 * hypervisor and on Xen 4.17 alike (tests/integration/relay/test_guest_relay_xenctrl.py).
 *
 *   xc_relay_check [--commandline TEXT] [--tbuf-pages N] [--tbuf-preset] [--shutdown]
 *
 * --commandline: the hypervisor's command line, which XENVER_commandline must return;
 * --tbuf-preset: the trace buffers' size was set already (trace=capture), get_size says that one;
 * --shutdown: end with pvhv_xc_dom0_shutdown (our addition) so the machine ends.
 * Prints one line per check ("xc_relay_check: <check>: ok|FAIL ..."), then passed or failed.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <xenctrl.h>
#include <xenctrl_pvhv.h>
#include <xen/trace.h>

static int failures;

#define CHECK(cond, ...)                                        \
  do {                                                          \
    if (cond) {                                                 \
      printf("xc_relay_check: " __VA_ARGS__);                   \
      printf(": ok\n");                                         \
    } else {                                                    \
      printf("xc_relay_check: " __VA_ARGS__);                   \
      printf(": FAIL (errno %d %s)\n", errno, strerror(errno)); \
      failures++;                                               \
    }                                                           \
  } while (0)

/* A sysctl our hypervisor may not serve yet: Xen's answer for that is -ENOSYS or -EOPNOTSUPP. */
static int not_served(int err) { return err == ENOSYS || err == EOPNOTSUPP; }

static void check_version(xc_interface* xch, const char* commandline) {
  int version = xc_version(xch, XENVER_version, NULL);
  CHECK(version > 0, "XENVER_version %d.%d", version >> 16, version & 0xffff);
  xen_extraversion_t extra;
  memset(extra, 0x7e, sizeof(extra));
  CHECK(xc_version(xch, XENVER_extraversion, &extra) == 0 && memchr(extra, 0, sizeof(extra)),
        "XENVER_extraversion '%.16s'", extra);
  printf("xc_relay_check: hypervisor %d.%d%.16s\n", version >> 16, version & 0xffff, extra);
  xen_capabilities_info_t caps;
  CHECK(xc_version(xch, XENVER_capabilities, &caps) == 0 && strstr(caps, "xen-3.0-x86_64") != NULL,
        "XENVER_capabilities '%.64s'", caps);
  xen_changeset_info_t changeset;
  CHECK(xc_version(xch, XENVER_changeset, &changeset) == 0 && memchr(changeset, 0, sizeof(changeset)),
        "XENVER_changeset '%.64s'", changeset);
  xen_compile_info_t compile;
  CHECK(xc_version(xch, XENVER_compile_info, &compile) == 0 && compile.compiler[0] != 0,
        "XENVER_compile_info compiler '%.32s'", compile.compiler);
  xen_platform_parameters_t platform;
  CHECK(xc_version(xch, XENVER_platform_parameters, &platform) == 0 && platform.virt_start == 0xffff800000000000ull,
        "XENVER_platform_parameters virt_start %#lx", (unsigned long)platform.virt_start);
  CHECK(xc_version(xch, XENVER_pagesize, NULL) == 4096, "XENVER_pagesize");
  xen_feature_info_t features = {.submap_idx = 0};
  CHECK(xc_version(xch, XENVER_get_features, &features) == 0 && (features.submap & (1u << XENFEAT_dom0)),
        "XENVER_get_features submap 0 = %#x (dom0)", features.submap);
  xen_domain_handle_t handle;
  memset(handle, 0xff, sizeof(handle));
  CHECK(xc_version(xch, XENVER_guest_handle, &handle) == 0, "XENVER_guest_handle");
  xen_commandline_t line;
  int rc = xc_version(xch, XENVER_commandline, &line);
  CHECK(rc == 0 && (!commandline || strcmp(line, commandline) == 0), "XENVER_commandline '%.200s'", line);
  errno = 0;
  CHECK(xc_version(xch, 0x7777, &line) == -EINVAL, "an unknown XENVER_ command is -EINVAL");
}

static void check_tbuf(xc_interface* xch, unsigned long pages, int preset, int have_cpus) {
  unsigned long mfn = 0, size = 0;
  CHECK(xc_tbuf_enable(xch, pages, &mfn, &size) == 0 && mfn != 0 && size > 0,
        "xc_tbuf_enable(%lu): t_info mfn %#lx, %lu bytes", pages, mfn, size);
  unsigned long got = 0;
  CHECK(xc_tbuf_get_size(xch, &got) == 0 && (preset ? got > 0 : got == pages), "xc_tbuf_get_size %lu", got);
  /* The t_info page itself, read through our explicit foreign-memory call. */
  struct t_info info;
  CHECK(pvhv_xc_foreign_read(xch, DOMID_XEN, mfn, 0, &info, sizeof(info)) == 0 && info.tbuf_size == got,
        "t_info read through the relay: tbuf_size %u", info.tbuf_size);
  CHECK(xc_tbuf_set_evt_mask(xch, 0xfffff000u) == 0, "xc_tbuf_set_evt_mask(TRC_ALL)");
  xc_cpumap_t map = xc_cpumap_alloc(xch);
  if (have_cpus) {
    CHECK(map != NULL, "xc_cpumap_alloc");
    if (map) {
      xc_cpumap_setcpu(0, map);
      CHECK(xc_tbuf_set_cpu_mask(xch, map) == 0, "xc_tbuf_set_cpu_mask(cpu 0)");
    }
  } else {
    uint8_t one = 1;
    errno = 0;
    CHECK(map == NULL && xc_tbuf_set_cpu_mask(xch, &one) == -1 && not_served(errno),
          "xc_tbuf_set_cpu_mask fails as physinfo does");
  }
  free(map);
  CHECK(xc_tbuf_disable(xch) == 0, "xc_tbuf_disable");
  CHECK(xc_tbuf_get_size(xch, &got) == 0 && got > 0, "xc_tbuf_get_size after disable %lu", got);
  if (!preset) {
    errno = 0;
    CHECK(xc_tbuf_set_size(xch, pages + 1) == -1 && errno == EINVAL, "xc_tbuf_set_size once set: EINVAL");
  }
}

static int check_info(xc_interface* xch) {
  xc_physinfo_t physinfo;
  memset(&physinfo, 0, sizeof(physinfo));
  int have_physinfo = 0;
  errno = 0;
  if (xc_physinfo(xch, &physinfo) == 0) {
    have_physinfo = 1;
    CHECK(physinfo.nr_cpus >= 1 && physinfo.free_pages <= physinfo.total_pages && physinfo.total_pages > 0,
          "xc_physinfo: %u cpus, %lu pages, %lu free", physinfo.nr_cpus, (unsigned long)physinfo.total_pages,
          (unsigned long)physinfo.free_pages);
    CHECK(xc_get_max_cpus(xch) == (int)physinfo.max_cpu_id + 1, "xc_get_max_cpus %d", xc_get_max_cpus(xch));
  } else {
    CHECK(not_served(errno), "xc_physinfo not served: -1");
    CHECK(xc_get_max_cpus(xch) == -1, "xc_get_max_cpus -1 without physinfo");
  }

  static char ring[16384];
  unsigned int chars = sizeof(ring);
  errno = 0;
  if (xc_readconsolering(xch, ring, &chars, 0, 0, NULL) == 0)
    CHECK(chars > 0 && chars <= sizeof(ring), "xc_readconsolering: %u characters", chars);
  else
    CHECK(not_served(errno), "xc_readconsolering not served: -1");

  xc_domaininfo_t domains[8];
  errno = 0;
  int n = xc_domain_getinfolist(xch, 0, 8, domains);
  if (n >= 0)
    CHECK(n >= 1 && domains[0].domain == 0, "xc_domain_getinfolist: %d domains, first d%u", n,
          n > 0 ? domains[0].domain : 0);
  else
    CHECK(not_served(errno), "xc_domain_getinfolist not served: -1");
  return have_physinfo;
}

static void check_refusals(xc_interface* xch) {
  char page[16];
  errno = 0;
  CHECK(pvhv_xc_foreign_read(xch, DOMID_IO, 0xfee00, 0, page, sizeof(page)) == -1 && errno == EPERM,
        "foreign read of DOMID_IO refused: EPERM");
  errno = 0;
  CHECK(pvhv_xc_foreign_read(xch, DOMID_XEN, 1, 4090, page, sizeof(page)) == -1 && errno == EINVAL,
        "foreign read past the frame: EINVAL");
  errno = 0;
  CHECK(pvhv_xc_foreign_write(xch, 0, 1, 0, page, sizeof(page)) == -1 && errno == EPERM,
        "foreign write into dom0: EPERM");
}

int main(int argc, char** argv) {
  const char* commandline = NULL;
  unsigned long pages = 4;
  int preset = 0, shutdown = 0;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--commandline") && i + 1 < argc)
      commandline = argv[++i];
    else if (!strcmp(argv[i], "--tbuf-pages") && i + 1 < argc)
      pages = strtoul(argv[++i], NULL, 0);
    else if (!strcmp(argv[i], "--tbuf-preset"))
      preset = 1;
    else if (!strcmp(argv[i], "--shutdown"))
      shutdown = 1;
    else {
      fprintf(stderr, "usage: %s [--commandline TEXT] [--tbuf-pages N] [--tbuf-preset] [--shutdown]\n", argv[0]);
      return 2;
    }
  }
  setvbuf(stdout, NULL, _IOLBF, 0);
  xc_interface* xch = xc_interface_open(NULL, NULL, 0);
  if (!xch) {
    printf("xc_relay_check: xc_interface_open: FAIL (%s)\n", strerror(errno));
    return 1;
  }
  printf("xc_relay_check: transport %s\n", pvhv_xc_transport(xch));
  check_version(xch, commandline);
  int have_cpus = check_info(xch);
  check_tbuf(xch, pages, preset, have_cpus);
  check_refusals(xch);
  if (shutdown) CHECK(pvhv_xc_dom0_shutdown(xch, SHUTDOWN_poweroff) == 0, "dom0 shutdown requested");
  CHECK(xc_interface_close(xch) == 0, "xc_interface_close");
  printf("xc_relay_check: %s\n", failures ? "failed" : "passed");
  return failures ? 1 : 0;
}
