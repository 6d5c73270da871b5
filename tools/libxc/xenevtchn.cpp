// libxenevtchn's interface (Debian's /usr/include/xenevtchn.h) over the relay, as Linux's evtchn
// driver serves it to Xen's library: a handle owns the dom0 ports it bound; each event masks its
// port until xenevtchn_unmask. The handle shares the process's link with its libxenctrl handles
// (transport.h), so a program can hold both on a relay that serves one session.
#include <algorithm>
#include <cerrno>
#include <mutex>
#include <string>
#include <vector>

#include "tools/libxc/xc_private.h"

struct xenevtchn_handle {
  std::shared_ptr<pvhv::xc::Transport> transport;
  std::mutex mutex;             // the ports list: a handle may be used from several threads
  std::vector<uint32_t> ports;  // the ones this handle bound (Linux's per-file list)
};

namespace {
bool owns(xenevtchn_handle* xce, uint32_t port) {
  std::lock_guard<std::mutex> lock(xce->mutex);
  return std::find(xce->ports.begin(), xce->ports.end(), port) != xce->ports.end();
}

xenevtchn_port_or_error_t bound(xenevtchn_handle* xce, int rc, uint32_t port) {
  if (rc < 0) return -1;
  std::lock_guard<std::mutex> lock(xce->mutex);
  xce->ports.push_back(port);
  return xenevtchn_port_or_error_t(port);
}
}  // namespace

xenevtchn_handle* xenevtchn_open(xentoollog_logger* logger, unsigned int flags) {
  (void)logger;
  (void)flags;  // XENEVTCHN_NO_CLOEXEC: the link's socket is always close-on-exec here
  std::string why;
  auto transport = pvhv::xc::open_transport_from_environment(why);
  if (!transport) return nullptr;  // errno from the transport
  auto* xce = new xenevtchn_handle;
  xce->transport = std::move(transport);
  return xce;
}

xenevtchn_handle* xenevtchn_fdopen(xentoollog_logger*, int, unsigned) {
  errno = EOPNOTSUPP;  // there is no evtchn device whose descriptor could be handed on
  return nullptr;
}

int xenevtchn_close(xenevtchn_handle* xce) {
  if (!xce) return 0;
  for (uint32_t port : xce->ports) xce->transport->evtchn_close(port);  // as closing the device
  delete xce;
  return 0;
}

// No descriptor becomes readable when an event is due: the relay's link carries answers and
// trace frames too, and nothing reads it between calls. Callers wait in xenevtchn_pending.
int xenevtchn_fd(xenevtchn_handle*) {
  errno = EOPNOTSUPP;
  return -1;
}

int xenevtchn_notify(xenevtchn_handle* xce, evtchn_port_t port) {
  if (!owns(xce, port)) {
    errno = ENOTCONN;  // Linux's evtchn driver: not a port this file bound
    return -1;
  }
  return xce->transport->evtchn_notify(port);
}

xenevtchn_port_or_error_t xenevtchn_bind_unbound_port(xenevtchn_handle*, uint32_t) {
  errno = EOPNOTSUPP;  // the relay binds only VIRQs and other domains' ports for the host
  return -1;
}

xenevtchn_port_or_error_t xenevtchn_bind_interdomain(xenevtchn_handle* xce, uint32_t domid, evtchn_port_t remote_port) {
  uint32_t port = 0;
  int rc = xce->transport->evtchn_bind_interdomain(domid, remote_port, port);
  return bound(xce, rc, port);
}

xenevtchn_port_or_error_t xenevtchn_bind_virq(xenevtchn_handle* xce, unsigned int virq) {
  uint32_t port = 0;
  int rc = xce->transport->evtchn_bind_virq(virq, port);
  return bound(xce, rc, port);
}

int xenevtchn_unbind(xenevtchn_handle* xce, evtchn_port_t port) {
  {
    std::lock_guard<std::mutex> lock(xce->mutex);
    auto it = std::find(xce->ports.begin(), xce->ports.end(), port);
    if (it == xce->ports.end()) {
      errno = ENOTCONN;  // Linux's evtchn driver for a port this file did not bind
      return -1;
    }
    xce->ports.erase(it);
  }
  return xce->transport->evtchn_close(port);
}

// Blocks until one of the handle's ports has an event, as a read of Linux's evtchn device does.
xenevtchn_port_or_error_t xenevtchn_pending(xenevtchn_handle* xce) {
  std::vector<uint32_t> ports;
  {
    std::lock_guard<std::mutex> lock(xce->mutex);
    ports = xce->ports;
  }
  if (ports.empty()) {
    errno = EAGAIN;  // nothing bound: nothing could ever come
    return -1;
  }
  uint32_t port = 0;
  if (xce->transport->evtchn_wait(ports, -1, port) < 0) return -1;
  return xenevtchn_port_or_error_t(port);
}

int xenevtchn_unmask(xenevtchn_handle* xce, evtchn_port_t port) {
  if (!owns(xce, port)) return 0;  // Linux's driver ignores ports the file did not bind
  return xce->transport->evtchn_unmask(port);
}

int xenevtchn_restrict(xenevtchn_handle*, domid_t) {
  errno = EOPNOTSUPP;
  return -1;
}
