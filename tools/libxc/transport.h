// How the library reaches the hypervisor: the operations of the relay protocol
// (tools/PROTOCOL.md), as Linux's privcmd, evtchn and foreign-memory drivers offer them to
// Xen's libraries. Chosen at xc_interface_open by PVHV_XENCTRL (tools/README.md).
// Every operation returns 0, or -1 with errno set.
#pragma once
#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace pvhv::xc {

class Transport {
 public:
  virtual ~Transport() = default;
  // privcmd's IOCTL_PRIVCMD_HYPERCALL: `result` is the hypercall's return value (a negative
  // Xen error included: the caller turns it into errno).
  virtual int hypercall(uint32_t number, const uint64_t (&args)[5], int64_t& result) = 0;
  // Hypercall buffers: page runs in dom0 whose addresses hypercalls are given.
  virtual int buffer_alloc(uint32_t pages, uint64_t& address) = 0;
  virtual int buffer_free(uint64_t address) = 0;
  virtual int buffer_write(uint64_t address, const void* data, size_t length) = 0;
  virtual int buffer_read(uint64_t address, void* data, size_t length) = 0;
  // One frame of another domain (or DOMID_XEN), by machine frame number.
  virtual int foreign_read(uint32_t domid, uint64_t frame, uint32_t offset, void* out, size_t length) = 0;
  virtual int foreign_write(uint32_t domid, uint64_t frame, uint32_t offset, const void* data, size_t length) = 0;
  // A lasting writable mapping of one frame of another domain in dom0 (xenforeignmemory_map's
  // role for a backend's rings): a handle, then reads and writes through it until unmapped.
  // Transports without it: ENOSYS.
  virtual int foreign_map(uint32_t domid, uint64_t frame, uint32_t& handle) {
    (void)domid, (void)frame, (void)handle;
    errno = ENOSYS;
    return -1;
  }
  virtual int foreign_unmap(uint32_t handle) {
    (void)handle;
    errno = ENOSYS;
    return -1;
  }
  virtual int mapped_read(uint32_t handle, uint32_t offset, void* out, size_t length) {
    (void)handle, (void)offset, (void)out, (void)length;
    errno = ENOSYS;
    return -1;
  }
  virtual int mapped_write(uint32_t handle, uint32_t offset, const void* data, size_t length) {
    (void)handle, (void)offset, (void)data, (void)length;
    errno = ENOSYS;
    return -1;
  }
  // Linux's evtchn driver: a dom0 port bound to another domain's port for the host, notified,
  // unmasked after an event, closed.
  virtual int evtchn_bind_interdomain(uint32_t remote_domid, uint32_t remote_port, uint32_t& local_port) = 0;
  virtual int evtchn_notify(uint32_t port) = 0;
  virtual int evtchn_unmask(uint32_t port) = 0;
  virtual int evtchn_close(uint32_t port) = 0;
  // EVTCHNOP_bind_virq in dom0 (vCPU 0) for the host: the port, masked after each event as the
  // others. Transports without it: ENOSYS.
  virtual int evtchn_bind_virq(uint32_t virq, uint32_t& local_port) {
    (void)virq, (void)local_port;
    errno = ENOSYS;
    return -1;
  }
  // Waits up to `timeout_ms` (-1: for ever) for an event on one of `ports` (empty: any of the
  // host's ports) and takes it: 0 and the port, or -1 with ETIMEDOUT (or the link's errno).
  // Events on other ports stay queued for their owners (another handle of the same process).
  virtual int evtchn_wait(const std::vector<uint32_t>& ports, int timeout_ms, uint32_t& port) {
    (void)ports, (void)timeout_ms, (void)port;
    errno = ENOSYS;
    return -1;
  }
  // A whole request of the relay protocol made for another client (pvhvd's `relay` op): see
  // RelayTransport::forward. Transports without it: ENOSYS.
  virtual int forward(uint8_t type, const std::vector<uint8_t>& fields, uint8_t& answer_type,
                      std::vector<uint8_t>& answer_fields) {
    (void)type, (void)fields, (void)answer_type, (void)answer_fields;
    errno = ENOSYS;
    return -1;
  }
  virtual int dom0_shutdown(uint32_t reason) = 0;
  virtual const std::string& describe() const = 0;
  // A link kept across its drops (pvhvd's, tools/PROTOCOL.md "The link dropping"): once asked
  // for, a link that breaks (closed, a read or write failing, a request unanswered for the
  // request timeout) is marked down, every request fails at once with EAGAIN until reopen()
  // connects again and opens a new session, and generation() counts the sessions. Transports
  // without it: always up, generation 0, reopen ENOSYS.
  virtual void keep_across_drops() {}
  virtual int link_down() const { return 0; }  // 0: up; else the errno that broke it
  virtual uint64_t generation() const { return 0; }
  virtual int reopen(int timeout_ms, std::string& why) {
    (void)timeout_ms;
    why = "this transport cannot reconnect";
    errno = ENOSYS;
    return -1;
  }
};

// The transport PVHV_XENCTRL names; null with errno and `why` when there is none. One per
// process and link: handles opened while another is open share its session (the relay serves
// one session per link, and a second OPEN would end the first's), as Xen's handles share privcmd.
std::shared_ptr<Transport> open_transport_from_environment(std::string& why);

}  // namespace pvhv::xc
