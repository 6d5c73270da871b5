// xc_interface_open/close, errors and messages (Xen's xc_private.c behaviour), and our additions
// of xenctrl_pvhv.h.
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string>

#include "tools/libxc/xc_private.h"

namespace pvhv::xc {
namespace {

void vreport(xc_interface* xch, int errnoval, const char* format, va_list args) {
  char message[1024];
  std::vsnprintf(message, sizeof(message), format, args);
  if (errnoval >= 0) {
    size_t used = std::strlen(message);
    std::snprintf(message + used, sizeof(message) - used, " (%d = %s)", errnoval, std::strerror(errnoval));
  }
  if (xch) {
    xch->last_error.code = XC_INTERNAL_ERROR;
    std::snprintf(xch->last_error.message, sizeof(xch->last_error.message), "%s", message);
  }
  xentoollog_logger* logger = xch ? xch->logger : nullptr;
  if (logger && logger->vmessage) {
    // The logger takes a va_list: hand it the finished message through "%s".
    auto call = [&](const char* fmt, ...) {
      va_list al;
      va_start(al, fmt);
      logger->vmessage(logger, XTL_ERROR, errnoval, "xc", fmt, al);
      va_end(al);
    };
    call("%s", message);
  } else {
    std::fprintf(stderr, "xc: error: %s\n", message);
  }
}
}  // namespace

void error(xc_interface* xch, const char* format, ...) {
  va_list args;
  va_start(args, format);
  vreport(xch, -1, format, args);
  va_end(args);
}

void perror(xc_interface* xch, const char* format, ...) {
  int saved = errno;
  va_list args;
  va_start(args, format);
  vreport(xch, saved, format, args);
  va_end(args);
  errno = saved;
}

long hypercall(xc_interface* xch, unsigned number, uint64_t a0, uint64_t a1, uint64_t a2, uint64_t a3, uint64_t a4) {
  if (!xch || !xch->transport) {
    errno = EBADF;
    return -1;
  }
  const uint64_t args[5] = {a0, a1, a2, a3, a4};
  int64_t value = 0;
  if (xch->transport->hypercall(number, args, value) < 0) return -1;
  if (value < 0) {
    errno = int(-value);
    return -1;
  }
  return long(value);
}

int Bounce::prepare() {
  if (!user_ || size_ == 0) return 0;
  if (!xch_->transport) {
    errno = EBADF;
    return -1;
  }
  if (size_ / kPageBytes >= UINT32_MAX) {  // more than any dom0 could hold: as a failed mmap
    errno = ENOMEM;
    return -1;
  }
  generation_ = xch_->transport->generation();
  if (pages() == 1) {
    std::lock_guard<std::mutex> lock(xch_->cache_mutex);
    if (xch_->page_cache_generation != generation_) {  // the relay freed them at the new OPEN
      xch_->page_cache.clear();
      xch_->page_cache_generation = generation_;
    }
    if (!xch_->page_cache.empty()) {
      address_ = xch_->page_cache.back();
      xch_->page_cache.pop_back();
    }
  }
  if (!address_ && xch_->transport->buffer_alloc(pages(), address_) < 0) {
    address_ = 0;
    return -1;
  }
  if ((direction_ & in) && xch_->transport->buffer_write(address_, user_, size_) < 0) {
    int saved = errno;
    release();
    errno = saved;
    return -1;
  }
  return 0;
}

int Bounce::finish() {
  if (!address_) return 0;
  int rc = 0;
  if ((direction_ & out) && xch_->transport->buffer_read(address_, user_, size_) < 0) rc = -1;
  int saved = errno;
  release();
  errno = saved;
  return rc;
}

void Bounce::release() {
  if (!address_) return;
  // A few one-page buffers are kept: most hypercalls bounce one structure of under a page.
  constexpr size_t kCachedPages = 4;
  int saved = errno;
  bool kept = false;
  if (xch_->transport->generation() != generation_) {  // an old session's: gone with it
    address_ = 0;
    return;
  }
  if (pages() == 1) {
    std::lock_guard<std::mutex> lock(xch_->cache_mutex);
    if (xch_->page_cache.size() < kCachedPages) {
      xch_->page_cache.push_back(address_);
      kept = true;
    }
  }
  if (!kept) xch_->transport->buffer_free(address_);
  errno = saved;
  address_ = 0;
}

int do_sysctl(xc_interface* xch, xen_sysctl_t& sysctl) {
  sysctl.interface_version = XEN_SYSCTL_INTERFACE_VERSION;
  Bounce bounce(xch, &sysctl, sizeof(sysctl), Bounce::both);
  if (bounce.prepare() < 0) {
    perror(xch, "Could not bounce buffer for sysctl hypercall");
    return -1;
  }
  long rc = hypercall(xch, __HYPERVISOR_sysctl, bounce.address());
  int saved = errno;
  if (bounce.finish() < 0) return -1;
  errno = saved;
  return int(rc);
}

int do_domctl(xc_interface* xch, xen_domctl_t& domctl) {
  domctl.interface_version = XEN_DOMCTL_INTERFACE_VERSION;
  Bounce bounce(xch, &domctl, sizeof(domctl), Bounce::both);
  if (bounce.prepare() < 0) {
    perror(xch, "Could not bounce buffer for domctl hypercall");
    return -1;
  }
  long rc = hypercall(xch, __HYPERVISOR_domctl, bounce.address());
  int saved = errno;
  if (bounce.finish() < 0) return -1;
  errno = saved;
  return int(rc);
}

long do_memory_op(xc_interface* xch, unsigned cmd, void* arg, size_t len) {
  Bounce bounce(xch, arg, len, Bounce::both);
  if (bounce.prepare() < 0) {
    perror(xch, "Could not bounce memory for XENMEM hypercall");
    return -1;
  }
  long rc = hypercall(xch, __HYPERVISOR_memory_op, cmd, bounce.address());
  int saved = errno;
  if (bounce.finish() < 0) return -1;
  errno = saved;
  return rc;
}

xc_interface* open_with_transport(std::unique_ptr<Transport> transport, xentoollog_logger* logger) {
  auto* xch = new xc_interface_core;
  xch->logger = logger;
  xch->transport = std::move(transport);
  return xch;
}

}  // namespace pvhv::xc

using namespace pvhv::xc;

xc_interface* xc_interface_open(xentoollog_logger* logger, xentoollog_logger* dombuild_logger, unsigned open_flags) {
  (void)dombuild_logger;  // the domain builder is not here yet
  auto* xch = new xc_interface_core;
  xch->logger = logger;
  if (open_flags & XC_OPENFLAG_DUMMY) return xch;
  std::string why;
  xch->transport = open_transport_from_environment(why);
  if (!xch->transport) {
    int saved = errno;
    error(xch, "Could not obtain handle on privileged command interface: %s: %s", why.c_str(), std::strerror(saved));
    delete xch;
    errno = saved;
    return nullptr;
  }
  return xch;
}

int xc_interface_close(xc_interface* xch) {
  if (!xch) return 0;
  if (xch->transport)
    for (uint64_t page : xch->page_cache) xch->transport->buffer_free(page);
  delete xch;
  return 0;
}

const xc_error* xc_get_last_error(xc_interface* xch) { return &xch->last_error; }

void xc_clear_last_error(xc_interface* xch) {
  xch->last_error.code = XC_ERROR_NONE;
  xch->last_error.message[0] = 0;
}

const char* xc_error_code_to_desc(int code) {
  switch (code) {
    case XC_ERROR_NONE: return "No error details";
    case XC_INTERNAL_ERROR: return "Internal error";
    case XC_INVALID_KERNEL: return "Invalid kernel";
    case XC_INVALID_PARAM: return "Invalid configuration";
    case XC_OUT_OF_MEMORY: return "Out of memory";
    default: return "Unknown error code";
  }
}

const char* xc_strerror(xc_interface*, int errcode) { return std::strerror(errcode); }

int pvhv_xc_foreign_read(xc_interface* xch, uint32_t domid, uint64_t frame, uint32_t offset, void* out, size_t length) {
  if (!xch->transport) {
    errno = EBADF;
    return -1;
  }
  return xch->transport->foreign_read(domid, frame, offset, out, length);
}

int pvhv_xc_foreign_write(xc_interface* xch, uint32_t domid, uint64_t frame, uint32_t offset, const void* data,
                          size_t length) {
  if (!xch->transport) {
    errno = EBADF;
    return -1;
  }
  return xch->transport->foreign_write(domid, frame, offset, data, length);
}

int pvhv_xc_foreign_map(xc_interface* xch, uint32_t domid, uint64_t frame, uint32_t* handle) {
  if (!xch->transport || !handle) {
    errno = xch->transport ? EINVAL : EBADF;
    return -1;
  }
  return xch->transport->foreign_map(domid, frame, *handle);
}

int pvhv_xc_foreign_unmap(xc_interface* xch, uint32_t handle) {
  if (!xch->transport) {
    errno = EBADF;
    return -1;
  }
  return xch->transport->foreign_unmap(handle);
}

int pvhv_xc_mapped_read(xc_interface* xch, uint32_t handle, uint32_t offset, void* out, size_t length) {
  if (!xch->transport) {
    errno = EBADF;
    return -1;
  }
  return xch->transport->mapped_read(handle, offset, out, length);
}

int pvhv_xc_mapped_write(xc_interface* xch, uint32_t handle, uint32_t offset, const void* data, size_t length) {
  if (!xch->transport) {
    errno = EBADF;
    return -1;
  }
  return xch->transport->mapped_write(handle, offset, data, length);
}

int pvhv_xc_evtchn_bind_interdomain(xc_interface* xch, uint32_t domid, uint32_t remote_port, uint32_t* local_port) {
  if (!xch->transport || !local_port) {
    errno = xch->transport ? EINVAL : EBADF;
    return -1;
  }
  return xch->transport->evtchn_bind_interdomain(domid, remote_port, *local_port);
}

int pvhv_xc_evtchn_notify(xc_interface* xch, uint32_t local_port) {
  if (!xch->transport) {
    errno = EBADF;
    return -1;
  }
  return xch->transport->evtchn_notify(local_port);
}

int pvhv_xc_evtchn_unmask(xc_interface* xch, uint32_t local_port) {
  if (!xch->transport) {
    errno = EBADF;
    return -1;
  }
  return xch->transport->evtchn_unmask(local_port);
}

int pvhv_xc_evtchn_close(xc_interface* xch, uint32_t local_port) {
  if (!xch->transport) {
    errno = EBADF;
    return -1;
  }
  return xch->transport->evtchn_close(local_port);
}

int pvhv_xc_evtchn_bind_virq(xc_interface* xch, uint32_t virq, uint32_t* local_port) {
  if (!xch->transport || !local_port) {
    errno = xch->transport ? EINVAL : EBADF;
    return -1;
  }
  return xch->transport->evtchn_bind_virq(virq, *local_port);
}

int pvhv_xc_evtchn_pending(xc_interface* xch, int timeout_ms, uint32_t* local_port) {
  if (!xch->transport || !local_port) {
    errno = xch->transport ? EINVAL : EBADF;
    return -1;
  }
  return xch->transport->evtchn_wait({}, timeout_ms, *local_port);
}

int pvhv_xc_relay_forward(xc_interface* xch, uint8_t type, const void* fields, size_t length, uint8_t* answer_type,
                          void* answer, size_t* answer_length) {
  if (!xch->transport || !answer_type || !answer_length || (length && !fields)) {
    errno = xch->transport ? EINVAL : EBADF;
    return -1;
  }
  const auto* bytes = static_cast<const uint8_t*>(fields);
  std::vector<uint8_t> in(bytes, bytes + length), out;
  if (xch->transport->forward(type, in, *answer_type, out) < 0) return -1;
  if (out.size() > *answer_length) {
    errno = ENOBUFS;
    return -1;
  }
  if (!out.empty()) std::memcpy(answer, out.data(), out.size());
  *answer_length = out.size();
  return 0;
}

int pvhv_xc_dom0_shutdown(xc_interface* xch, unsigned int reason) {
  if (!xch->transport) {
    errno = EBADF;
    return -1;
  }
  return xch->transport->dom0_shutdown(reason);
}

int pvhv_xc_link_keep(xc_interface* xch) {
  if (!xch || !xch->transport) {
    errno = EBADF;
    return -1;
  }
  xch->transport->keep_across_drops();
  return 0;
}

int pvhv_xc_link_down(xc_interface* xch, uint64_t* generation) {
  if (!xch || !xch->transport) return EBADF;
  if (generation) *generation = xch->transport->generation();
  return xch->transport->link_down();
}

int pvhv_xc_link_reopen(xc_interface* xch, int timeout_ms) {
  if (!xch || !xch->transport) {
    errno = EBADF;
    return -1;
  }
  std::string why;  // errno says it: the owner reports as often as it likes (it retries)
  return xch->transport->reopen(timeout_ms, why) < 0 ? -1 : 0;
}

const char* pvhv_xc_transport(xc_interface* xch) {
  return xch && xch->transport ? xch->transport->describe().c_str() : "none";
}
