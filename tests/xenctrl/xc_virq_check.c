/* VIRQ_DOM_EXC for the host through libxenevtchn's interface (Debian's xenevtchn.h, served by our
 * libxenctrl.so on the process's one relay session): Xen's errors for a bad VIRQ number and for
 * binding one twice, unbind, and the event itself when domains shut down and are destroyed, a
 * burst of several shutdowns losing none (the port stays masked while the host looks, and an
 * event that comes meanwhile is delivered at the unmask). The same binary runs on our
 * hypervisor and on Xen 4.17.
 *
 *   xc_virq_check [--shutdown]
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <xenctrl.h>
#include <xenctrl_pvhv.h>
#include <xenevtchn.h>

#include <pvhv_xenguest.h>

static int failures;

#define CHECK(cond, ...)                                        \
  do {                                                          \
    if (cond) {                                                 \
      printf("xc_virq_check: " __VA_ARGS__);                    \
      printf(": ok\n");                                         \
    } else {                                                    \
      printf("xc_virq_check: " __VA_ARGS__);                    \
      printf(": FAIL (errno %d %s)\n", errno, strerror(errno)); \
      failures++;                                               \
    }                                                           \
    fflush(stdout);                                             \
  } while (0)

enum { kBurst = 4 };

static int create_domain(xc_interface* xch, uint32_t* domid) {
  struct xen_domctl_createdomain config;
  pvhv_pv_createdomain_defaults(&config);
  *domid = 0;
  return xc_domain_create(xch, domid, &config);
}

/* What a toolstack's monitor does on VIRQ_DOM_EXC: the whole list again. The number of `ids`
 * shut down (flag set), and of those gone. */
static void look(xc_interface* xch, const uint32_t* ids, int n, int* shut, int* gone) {
  xc_domaininfo_t infos[64];
  int got = xc_domain_getinfolist(xch, 0, 64, infos);
  *shut = *gone = 0;
  for (int i = 0; i < n; ++i) {
    int found = 0;
    for (int j = 0; j < got; ++j)
      if (infos[j].domain == ids[i]) {
        found = 1;
        if (infos[j].flags & XEN_DOMINF_shutdown) ++*shut;
      }
    if (!found) ++*gone;
  }
}

/* Events until `want(shut, gone)` holds, each followed by a look and an unmask (in that order:
 * an event that comes between the two stays pending behind the mask and arrives at the unmask,
 * so the next look sees what it announced). The number of events taken, -1 on a timeout. */
static int events_until(xc_interface* xch, xenevtchn_handle* xce, int port, const uint32_t* ids, int n, int want_shut,
                        int want_gone) {
  int events = 0, shut = 0, gone = 0;
  for (;;) {
    alarm(30); /* xenevtchn_pending blocks: a lost event fails the program, not the machine */
    int p = xenevtchn_pending(xce);
    alarm(0);
    if (p != port) return -1;
    ++events;
    look(xch, ids, n, &shut, &gone);
    if (xenevtchn_unmask(xce, (evtchn_port_t)p) != 0) return -1;
    if (shut >= want_shut && gone >= want_gone) return events;
  }
}

int main(int argc, char** argv) {
  int shutdown = argc > 1 && !strcmp(argv[1], "--shutdown");
  xc_interface* xch = xc_interface_open(NULL, NULL, 0);
  if (!xch) {
    printf("xc_virq_check: no interface: %s\n", strerror(errno));
    return 1;
  }
  xenevtchn_handle* xce = xenevtchn_open(NULL, 0);
  CHECK(xce != NULL, "xenevtchn_open beside xc_interface_open (one session)");
  int port = -1;
  uint32_t one = 0, ids[kBurst];
  int n = 0, created = 0;
  if (!xce) goto out;

  errno = 0;
  CHECK(xenevtchn_bind_virq(xce, 24) == -1 && errno == EINVAL, "bind_virq(NR_VIRQS): EINVAL");
  errno = 0;
  CHECK(xenevtchn_bind_virq(xce, 0x80000000u) == -1 && errno == EINVAL, "bind_virq(2^31): EINVAL");
  port = xenevtchn_bind_virq(xce, VIRQ_DOM_EXC);
  CHECK(port > 0, "bind_virq(VIRQ_DOM_EXC): port %d", port);
  errno = 0;
  CHECK(xenevtchn_bind_virq(xce, VIRQ_DOM_EXC) == -1 && errno == EEXIST, "bind_virq(VIRQ_DOM_EXC) again: EEXIST");
  errno = 0;
  CHECK(xenevtchn_unbind(xce, (evtchn_port_t)port + 100) == -1 && errno == ENOTCONN,
        "unbind of a port not bound: ENOTCONN");
  CHECK(xenevtchn_unbind(xce, (evtchn_port_t)port) == 0, "unbind");
  errno = 0;
  CHECK(xenevtchn_unbind(xce, (evtchn_port_t)port) == -1 && errno == ENOTCONN, "unbind again: ENOTCONN");
  errno = 0;
  CHECK(pvhv_xc_evtchn_close(xch, (uint32_t)port) == -1 && errno == EINVAL,
        "the relay no longer lets the host close it");
  port = xenevtchn_bind_virq(xce, VIRQ_DOM_EXC);
  CHECK(port > 0, "bind_virq(VIRQ_DOM_EXC) after the unbind: port %d", port);
  if (port <= 0) goto out;

  /* One domain: its shutdown, then its destruction, each announced. */
  CHECK(create_domain(xch, &one) == 0, "createdomain d%u", one);
  CHECK(xc_domain_shutdown(xch, one, SHUTDOWN_poweroff) == 0, "remote_shutdown d%u", one);
  n = events_until(xch, xce, port, &one, 1, 1, 0);
  CHECK(n >= 1, "VIRQ_DOM_EXC for the shutdown (%d events), the list says shut down", n);
  CHECK(xc_domain_destroy(xch, one) == 0, "destroy d%u", one);
  n = events_until(xch, xce, port, &one, 1, 0, 1);
  CHECK(n >= 1, "VIRQ_DOM_EXC for the destruction (%d events), the list says gone", n);

  /* A burst: several shut down back to back while the host is not looking. */
  for (int i = 0; i < kBurst; ++i)
    if (create_domain(xch, &ids[i]) == 0) ++created;
  CHECK(created == kBurst, "created %d domains for the burst", created);
  for (int i = 0; i < created; ++i) xc_domain_shutdown(xch, ids[i], i % 2 ? SHUTDOWN_crash : SHUTDOWN_reboot);
  n = events_until(xch, xce, port, ids, created, created, 0);
  CHECK(n >= 1, "%d shutdowns in a burst: all seen after %d events", created, n);
  for (int i = 0; i < created; ++i) xc_domain_destroy(xch, ids[i]);
  n = events_until(xch, xce, port, ids, created, 0, created);
  CHECK(n >= 1, "%d destructions in a burst: all seen after %d events", created, n);

  /* Closing the handle unbinds its ports: the VIRQ can be bound again. */
  xenevtchn_close(xce);
  xce = NULL;
  uint32_t again = 0;
  CHECK(pvhv_xc_evtchn_bind_virq(xch, VIRQ_DOM_EXC, &again) == 0, "after xenevtchn_close, bound again: port %u", again);
  /* Xen may still announce the last destructions (its final one is deferred): whatever comes
   * now is on this port, nothing older leaks in from the closed handle's queue. */
  uint32_t got = again;
  errno = 0;
  int late = pvhv_xc_evtchn_pending(xch, 300, &got);
  CHECK((late == -1 && errno == ETIMEDOUT) || (late == 0 && got == again), "nothing but this port's events");
  CHECK(pvhv_xc_evtchn_close(xch, again) == 0, "closed");
out:
  if (xce) xenevtchn_close(xce);
  /* Even after a failure: the machine ends now, not at its timeout. */
  if (shutdown) CHECK(pvhv_xc_dom0_shutdown(xch, SHUTDOWN_poweroff) == 0, "dom0 shutdown requested");
  xc_interface_close(xch);
  if (failures) {
    printf("xc_virq_check: %d failures\n", failures);
    return 1;
  }
  printf("xc_virq_check: passed\n");
  return 0;
}
