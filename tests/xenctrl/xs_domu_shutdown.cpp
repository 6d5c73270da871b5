// A xenstore for one domU, served from the host through the relay (libxenctrl's
// pvhv_xc_foreign_read/write and pvhv_xc_evtchn_*), as pvhv-xenstored will serve every domain:
// builds a domU from our guest kernel with `xenbus=wait` (it runs no init and can only end by
// a control/shutdown request), writes its standard nodes, serves its ring, waits for its
// xenbus to come up (it writes control/feature-poweroff), writes control/shutdown and checks
// that the domain shuts down with the reason asked for and that it cleared the node first.
//
//   xs_domu_shutdown --kernel K [--request poweroff|reboot|halt] [--timeout-s N] [--shutdown 1]
// --shutdown 1: end with pvhv_xc_dom0_shutdown, so the machine ends.
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <fstream>
#include <iterator>
#include <string>
#include <vector>

extern "C" {
#include <xenctrl.h>
#include <xen/io/console.h>

#include "xenctrl_pvhv.h"
#include "pvhv_xenguest.h"
}
#include "tools/xenstore/xenstore.h"

namespace {

int failures = 0;
#define CHECK(cond, ...)                          \
  do {                                            \
    bool ok_ = (cond);                            \
    printf("xs_domu: %s: ", ok_ ? "ok" : "FAIL"); \
    printf(__VA_ARGS__);                          \
    printf("\n");                                 \
    fflush(stdout);                               \
    if (!ok_) ++failures;                         \
  } while (0)

double now() {
  timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + t.tv_nsec / 1e9;
}

// The console ring, read and consumed as xenconsoled does: the indexes first, then the bytes
// (the guest publishes its bytes before out_prod; one read of the whole page copies out[]
// before out_prod and could take an index newer than the bytes it read).
void drain_console(xc_interface* xch, uint32_t domid, uint64_t mfn, std::string& text) {
  xencons_interface ring;
  const size_t indexes = offsetof(xencons_interface, out_cons);
  if (pvhv_xc_foreign_read(xch, domid, mfn, indexes, &ring.out_cons, 2 * sizeof ring.out_cons) != 0) return;
  XENCONS_RING_IDX cons = ring.out_cons, prod = ring.out_prod;
  if (cons == prod) return;
  if (pvhv_xc_foreign_read(xch, domid, mfn, offsetof(xencons_interface, out), ring.out, sizeof ring.out) != 0) return;
  if (prod - cons > sizeof ring.out) cons = prod - sizeof ring.out;
  for (; cons != prod; ++cons) text.push_back(ring.out[MASK_XENCONS_IDX(cons, ring.out)]);
  pvhv_xc_foreign_write(xch, domid, mfn, offsetof(xencons_interface, out_cons), &cons, sizeof cons);
}

// One round of the store's ring: read the page, serve it, write back the server's fields only
// (rsp[], then req_cons and rsp_prod, and error): the guest owns the rest of its page.
bool serve_ring(xc_interface* xch, uint32_t domid, uint64_t mfn, xenstore::RingConnection& conn, uint32_t local_port) {
  // req_prod first, then the page: the bytes up to it are all in the later copy, whose own
  // req_prod may be newer than the req[] copied before it (as pvhv-xenstored reads).
  XENSTORE_RING_IDX req_prod;
  if (pvhv_xc_foreign_read(xch, domid, mfn, offsetof(xenstore_domain_interface, req_prod), &req_prod,
                           sizeof req_prod) != 0)
    return false;
  xenstore_domain_interface page;
  if (pvhv_xc_foreign_read(xch, domid, mfn, 0, &page, sizeof page) != 0) return false;
  page.req_prod = req_prod;
  auto result = conn.serve(page);
  if (result.page_changed) {
    pvhv_xc_foreign_write(xch, domid, mfn, offsetof(xenstore_domain_interface, rsp), page.rsp, sizeof page.rsp);
    pvhv_xc_foreign_write(xch, domid, mfn, offsetof(xenstore_domain_interface, req_cons), &page.req_cons, 4);
    pvhv_xc_foreign_write(xch, domid, mfn, offsetof(xenstore_domain_interface, rsp_prod), &page.rsp_prod, 4);
    pvhv_xc_foreign_write(xch, domid, mfn, offsetof(xenstore_domain_interface, error), &page.error, 4);
  }
  if (result.notify) pvhv_xc_evtchn_notify(xch, local_port);
  return !result.broken;
}

// Ends early: dom0 is still shut down when asked, so the machine ends.
int give_up(xc_interface* xch, bool shutdown_dom0) {
  if (shutdown_dom0) pvhv_xc_dom0_shutdown(xch, SHUTDOWN_poweroff);
  printf("xs_domu: FAILED\n");
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  const char* kernel_path = nullptr;
  std::string request = "poweroff";
  unsigned timeout_s = 200;
  bool shutdown_dom0 = false;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!strcmp(argv[i], "--kernel"))
      kernel_path = argv[i + 1];
    else if (!strcmp(argv[i], "--request"))
      request = argv[i + 1];
    else if (!strcmp(argv[i], "--timeout-s"))
      timeout_s = static_cast<unsigned>(atoi(argv[i + 1]));
    else if (!strcmp(argv[i], "--shutdown"))
      shutdown_dom0 = atoi(argv[i + 1]) != 0;
  }
  if (!kernel_path) {
    fprintf(stderr, "usage: %s --kernel K [--request poweroff|reboot|halt] [--timeout-s N]\n", argv[0]);
    return 2;
  }
  unsigned expected_reason = request == "reboot" ? SHUTDOWN_reboot : SHUTDOWN_poweroff;
  std::ifstream file(kernel_path, std::ios::binary);
  std::vector<char> kernel((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
  xc_interface* xch = xc_interface_open(nullptr, nullptr, 0);
  if (!xch) {
    printf("xs_domu: FAIL: xc_interface_open: %s\n", strerror(errno));
    return 1;
  }

  // libxl's order for a PV domain (as tests/xenctrl/xc_domu_lifecycle.c).
  const uint64_t memory_kb = 16 << 10;
  xen_domctl_createdomain config;
  pvhv_pv_createdomain_defaults(&config);
  uint32_t domid = 0;
  bool created = xc_domain_create(xch, &domid, &config) == 0 && xc_domain_max_vcpus(xch, domid, 1) == 0 &&
                 xc_domain_setmaxmem(xch, domid, memory_kb + 1024) == 0 &&
                 xc_domain_set_memmap_limit(xch, domid, memory_kb + 1024) == 0;
  CHECK(created, "created d%u", domid);
  if (!created) return give_up(xch, shutdown_dom0);
  pvhv_pv_image image = {kernel.data(), kernel.size(), nullptr, 0, "xenbus=wait", memory_kb, 0, 0};
  pvhv_pv_built built;
  int rc = pvhv_build_pv_domain(xch, domid, &image, &built);
  CHECK(rc == 0, "built d%u: store pfn %lu port %u%s%s", domid, (unsigned long)built.xenstore_pfn, built.store_port,
        rc ? ": " : "", rc ? built.message : "");
  if (rc != 0) {
    xc_domain_destroy(xch, domid);
    return give_up(xch, shutdown_dom0);
  }

  // The store: the domain's nodes, its introduction, its ring.
  xenstore::Store store;
  CHECK(xenstore::create_domain_nodes(store, {domid, "xs-domu", "5e5e5e5e-0000-4000-8000-000000000001", memory_kb,
                                              built.console_port, built.console_mfn}) == 0,
        "standard nodes of d%u written", domid);
  xenstore::ConnId dom0 = store.connect(0);
  std::string id = std::to_string(domid), mfn = std::to_string(built.xenstore_mfn),
              port = std::to_string(built.store_port);
  store.handle(dom0, xenstore::make_request(XS_INTRODUCE, {id, mfn, port}));
  CHECK(store.take_output(dom0).front().type == XS_INTRODUCE, "d%u introduced", domid);
  xenstore::RingConnection ring(store, domid);
  uint32_t store_local = 0, console_local = 0;
  CHECK(pvhv_xc_evtchn_bind_interdomain(xch, domid, built.store_port, &store_local) == 0,
        "store port %u bound in dom0 (port %u)", built.store_port, store_local);
  CHECK(pvhv_xc_evtchn_bind_interdomain(xch, domid, built.console_port, &console_local) == 0,
        "console port %u bound in dom0 (port %u)", built.console_port, console_local);
  CHECK(xc_domain_unpause(xch, domid) == 0, "d%u unpaused", domid);

  std::string console;
  const std::string home = xenstore::domain_path(domid);
  bool asked = false, ended = false, served = true;
  double asked_at = 0, until = now() + timeout_s;
  xc_dominfo_t info;
  while (now() < until) {
    served = serve_ring(xch, domid, built.xenstore_mfn, ring, store_local) && served;
    size_t before = console.size();
    drain_console(xch, domid, built.console_mfn, console);
    if (console.size() != before) pvhv_xc_evtchn_notify(xch, console_local);
    if (!asked && store.read(home + "/control/feature-poweroff") == std::string("1")) {
      CHECK(store.write(home + "/control/shutdown", request) == 0, "the guest's xenbus is up: control/shutdown = '%s'",
            request.c_str());
      asked = true;
      asked_at = now();
    }
    if (xc_domain_getinfo(xch, domid, 1, &info) != 1 || info.domid != domid) break;
    if (info.shutdown || info.crashed) {
      ended = true;
      break;
    }
    usleep(20 * 1000);
  }
  serve_ring(xch, domid, built.xenstore_mfn, ring, store_local);
  drain_console(xch, domid, built.console_mfn, console);
  printf("---- d%u console ----\n%s---- end ----\n", domid, console.c_str());
  CHECK(served, "the ring was served without a protocol error");
  CHECK(asked, "the guest registered its watch and wrote control/feature-poweroff");
  CHECK(ended && info.shutdown && !info.crashed && info.shutdown_reason == expected_reason,
        "d%u shut down with reason %u (asked: %u) %.2f s after the request", domid, info.shutdown_reason,
        expected_reason, now() - asked_at);
  CHECK(store.read(home + "/control/shutdown") == std::string(""), "the guest cleared control/shutdown first");
  CHECK(console.find("xenbus: control/shutdown asks for") != std::string::npos, "the guest's console says why");

  store.handle(dom0, xenstore::make_request(XS_RELEASE, {id}));
  CHECK(store.take_output(dom0).front().type == XS_RELEASE, "d%u released", domid);
  pvhv_xc_evtchn_close(xch, store_local);
  pvhv_xc_evtchn_close(xch, console_local);
  CHECK(xc_domain_destroy(xch, domid) == 0, "d%u destroyed", domid);
  if (shutdown_dom0) CHECK(pvhv_xc_dom0_shutdown(xch, SHUTDOWN_poweroff) == 0, "dom0 shutdown requested");
  xc_interface_close(xch);
  printf("xs_domu: %s\n", failures ? "FAILED" : "passed");
  return failures ? 1 : 0;
}
