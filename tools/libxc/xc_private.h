// The library's insides: the handle, error reporting as Xen's libxc reports, hypercalls with
// privcmd's convention, and hypercall buffers bounced through the relay as libxencall bounces
// them through its locked pages.
#pragma once
#include <cstdarg>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

#include "tools/libxc/transport.h"
#include "tools/libxc/xc_api.h"

struct xc_interface_core {
  xentoollog_logger* logger = nullptr;             // the caller's; null: messages go to stderr
  std::shared_ptr<pvhv::xc::Transport> transport;  // null for XC_OPENFLAG_DUMMY; shared by the process's handles
  xc_error last_error{};
  int max_cpus = 0;                    // xc_get_max_cpus' answer, once known
  std::vector<uint64_t> page_cache;    // one-page relay buffers kept for the next bounce
  uint64_t page_cache_generation = 0;  // the session they belong to (Transport::generation)
  std::mutex cache_mutex;
};

namespace pvhv::xc {

constexpr size_t kPageBytes = 4096;

// Xen's ERROR and PERROR: logged at XTL_ERROR and kept as the last error; PERROR appends errno.
void error(xc_interface* xch, const char* format, ...) __attribute__((format(printf, 2, 3)));
void perror(xc_interface* xch, const char* format, ...) __attribute__((format(printf, 2, 3)));

// A hypercall as privcmd makes it: its value when >= 0, else -1 with errno = -value. A
// transport failure is -1 with the transport's errno.
long hypercall(xc_interface* xch, unsigned number, uint64_t a0 = 0, uint64_t a1 = 0, uint64_t a2 = 0, uint64_t a3 = 0,
               uint64_t a4 = 0);

// The guest handle of a structure pointing at a relay buffer: the hypervisor reads and writes
// dom0's buffer at this address.
template <typename Handle>
void set_handle(Handle& handle, uint64_t address) {
  handle.p = reinterpret_cast<decltype(handle.p)>(address);
}

// One caller buffer shadowed by a relay buffer for the length of a hypercall (Xen's
// DECLARE_HYPERCALL_BOUNCE): copied in before, out after, as its direction says.
class Bounce {
 public:
  enum Direction { in = 1, out = 2, both = 3 };
  Bounce(xc_interface* xch, void* user, size_t size, Direction direction)
      : xch_(xch), user_(user), size_(size), direction_(direction) {}
  Bounce(const Bounce&) = delete;
  Bounce& operator=(const Bounce&) = delete;
  ~Bounce() { release(); }

  int prepare();                                 // 0, or -1 with errno
  int finish();                                  // copies out, releases; 0, or -1 with errno
  uint64_t address() const { return address_; }  // 0 for a null or empty buffer

 private:
  void release();
  uint32_t pages() const { return uint32_t((size_ + kPageBytes - 1) / kPageBytes); }

  xc_interface* xch_;
  void* user_;
  size_t size_;
  Direction direction_;
  uint64_t address_ = 0;
  uint64_t generation_ = 0;  // the link's session the buffer was taken in
};

// Xen's do_sysctl: the structure bounced both ways, the interface version filled in.
int do_sysctl(xc_interface* xch, xen_sysctl_t& sysctl);

// Xen's do_domctl: the same for XEN_DOMCTL_* (version XEN_DOMCTL_INTERFACE_VERSION).
int do_domctl(xc_interface* xch, xen_domctl_t& domctl);

// Xen's xc_memory_op: `arg` (len bytes) bounced both ways, the hypercall made directly (the
// relay's RESULT carries the whole 64-bit value, so no single-entry multicall is needed).
long do_memory_op(xc_interface* xch, unsigned cmd, void* arg, size_t len);

// A handle to use in place of a caller's pointer, for tests: the handle's own transport.
xc_interface* open_with_transport(std::unique_ptr<Transport> transport, xentoollog_logger* logger = nullptr);

}  // namespace pvhv::xc
