#pragma once
// The dom0 relay's request handling (tools/PROTOCOL.md): every request frame is checked
// (sequence, size, buffers, the policy of relay/server/relay_policy.h) before the backend does anything,
// and every request gets exactly one answer, an error frame when it cannot be served. Pure:
// the hypercalls, frame mappings and event channels are the backend's, the link is the sink's,
// so the unit tests drive it with fakes and the kernel with the real thing.
#include <stddef.h>
#include <stdint.h>

#include "relay/server/relay_buffer_table.h"
#include "relay/server/relay_mapping_table.h"
#include "common/relay/protocol.h"

namespace lib::relay {

using ::relay::Error;

class Backend {
 public:
  virtual long hypercall(uint32_t number, const uint64_t (&args)[5]) = 0;
  // Maps `pages` zeroed frames at `address`; returns where the relay reads and writes them, or
  // null when dom0 has no frames left (nothing stays mapped then).
  virtual uint8_t* map_buffer(uint64_t address, uint32_t pages) = 0;
  virtual void unmap_buffer(uint64_t address, uint32_t pages) = 0;
  // Copies between `data` and bytes [offset, offset + length) of machine frame `frame` owned by
  // `domid`, mapped for the copy only. 0 or the hypervisor's negative error.
  virtual long foreign_copy(uint16_t domid, uint64_t frame, uint32_t offset, uint8_t* data, uint32_t length,
                            bool write) = 0;
  // A lasting mapping (FOREIGN_MAP): machine frame `frame` of `domid` mapped writable at the page
  // of mapping slot `slot` until unmap_foreign(slot). 0 or the hypervisor's negative error
  // (nothing stays mapped then).
  virtual long map_foreign(uint32_t slot, uint16_t domid, uint64_t frame) = 0;
  virtual void unmap_foreign(uint32_t slot) = 0;
  // Where the relay reads and writes the page mapped at `slot`.
  virtual uint8_t* mapped_page(uint32_t slot) = 0;
  virtual long bind_virq(uint32_t virq, uint32_t& port) = 0;
  virtual long bind_interdomain(uint16_t remote_domain, uint32_t remote_port, uint32_t& port) = 0;
  virtual long notify(uint32_t port) = 0;
  virtual long unmask(uint32_t port) = 0;
  virtual long close(uint32_t port) = 0;
  virtual void session_opened() = 0;           // after OPENED went out
  virtual void shutdown(uint32_t reason) = 0;  // after the answer to SHUTDOWN went out

 protected:
  ~Backend() = default;
};

class Sink {
 public:
  virtual void send(uint8_t type, uint16_t channel, const uint8_t* payload, uint32_t length) = 0;

 protected:
  ~Sink() = default;
};

struct ServerStats {
  uint64_t requests = 0;  // request frames handled (answered, with an error or not)
  uint64_t errors = 0;    // error frames sent
  uint64_t events = 0;    // events pushed
};

class Server {
 public:
  static constexpr uint32_t kMaxPorts = 32;

  Server(Backend& backend, Sink& sink, uint64_t window_base, uint32_t flags)
      : backend_(backend), sink_(sink), buffers_(window_base), flags_(flags) {}

  // A whole frame whose CRC held.
  void handle_frame(uint8_t type, uint16_t channel, const uint8_t* payload, uint32_t length);
  // What the receiver found wrong with bytes that were no good frame.
  void handle_receive_error(Error code, uint8_t type, uint16_t channel, uint64_t detail);
  // An event on `port`: pushed to the host if the host bound that port (true), else not ours.
  bool handle_event(uint32_t port);

  bool owns_port(uint32_t port) const { return find_port(port) >= 0; }
  bool session_open() const { return open_; }
  const BufferTable& buffers() const { return buffers_; }
  const MappingTable& mappings() const { return mappings_; }
  uint32_t ports_bound() const { return port_count_; }
  const ServerStats& stats() const { return stats_; }

 private:
  struct Request {
    uint8_t type;
    uint16_t channel;
    uint32_t seq;
    ::relay::Reader& fields;
    uint32_t length;
  };

  void dispatch(Request& r);
  void open(Request& r);
  void hypercall(Request& r);
  void buffer_alloc(Request& r);
  void buffer_free(Request& r);
  void buffer_write(Request& r);
  void buffer_read(Request& r);
  void foreign(Request& r, bool write);
  void foreign_map(Request& r);
  void foreign_unmap(Request& r);
  void mapped(Request& r, bool write);
  void bind_virq(Request& r);
  void bind_interdomain(Request& r);
  void port_op(Request& r);
  void shutdown(Request& r);

  void reset_session();
  int find_port(uint32_t port) const;
  bool add_port(uint32_t port);
  void remove_port(uint32_t port);

  void send_error(uint32_t seq, uint8_t type, uint16_t channel, Error code, int64_t detail);
  void send_error(const Request& r, Error code, int64_t detail) { send_error(r.seq, r.type, r.channel, code, detail); }
  void send_buffer_status(const Request& r, BufferTable::Status status, uint64_t address);
  void answer(const Request& r, uint8_t type, ::relay::Writer& w) {
    sink_.send(type, r.channel, out_, uint32_t(w.size()));
  }
  ::relay::Writer response(uint32_t seq) {
    ::relay::Writer w(out_, sizeof(out_));
    w.u32(seq);
    return w;
  }
  // An answer that carries one u32 (a PORT, a MAPPING handle).
  void answer_u32(const Request& r, uint8_t type, uint32_t value) {
    ::relay::Writer w = response(r.seq);
    w.u32(value);
    answer(r, type, w);
  }

  Backend& backend_;
  Sink& sink_;
  BufferTable buffers_;
  MappingTable mappings_;
  uint32_t flags_;
  bool open_ = false;
  uint32_t expected_ = 0;
  uint16_t session_channel_ = 0;
  uint32_t ports_[kMaxPorts] = {};
  uint32_t port_count_ = 0;
  ServerStats stats_;
  uint8_t out_[::relay::kMaxData + 64];
  uint8_t data_[::relay::kMaxData];
};

}  // namespace lib::relay
