#include "relay/server/relay_server.h"

#include "relay/server/relay_policy.h"

namespace lib::relay {
namespace proto = ::relay;

namespace {
// Machine frame numbers the page-table entry format can hold (52-bit physical addresses).
constexpr uint64_t kMaxFrame = (1ull << 40) - 1;

// Bytes [offset, offset + length) lie inside one page.
constexpr bool within_page(uint32_t offset, uint32_t length) {
  return offset <= proto::kPageBytes && length <= proto::kPageBytes - offset;
}
}  // namespace

void Server::send_error(uint32_t seq, uint8_t type, uint16_t channel, Error code, int64_t detail) {
  uint8_t payload[proto::kErrorBytes];
  proto::Writer w(payload, sizeof(payload));
  w.u32(seq).u32(uint32_t(code)).u32(type).u64(uint64_t(detail));
  ++stats_.errors;
  sink_.send(proto::error, channel, payload, uint32_t(w.size()));
}

void Server::handle_receive_error(Error code, uint8_t type, uint16_t channel, uint64_t detail) {
  send_error(proto::kNoSequence, type, channel, code, int64_t(detail));
}

void Server::handle_frame(uint8_t type, uint16_t channel, const uint8_t* payload, uint32_t length) {
  proto::Reader fields(payload, length);
  uint32_t seq = fields.u32();
  if (!fields.ok()) seq = proto::kNoSequence;
  ++stats_.requests;
  if (!proto::is_request(type)) return send_error(seq, type, channel, Error::unknown_type, type);
  if (!fields.ok()) return send_error(seq, type, channel, Error::malformed, length);
  Request r{type, channel, seq, fields, length};
  if (type == proto::open) return open(r);
  if (!open_) return send_error(r, Error::no_session, 0);
  if (seq != expected_) return send_error(r, Error::out_of_order, expected_);
  ++expected_;  // in order: the number is used, whatever the answer
  dispatch(r);
}

void Server::dispatch(Request& r) {
  switch (r.type) {
    case proto::hypercall: return hypercall(r);
    case proto::buffer_alloc: return buffer_alloc(r);
    case proto::buffer_free: return buffer_free(r);
    case proto::buffer_write: return buffer_write(r);
    case proto::buffer_read: return buffer_read(r);
    case proto::foreign_read: return foreign(r, false);
    case proto::foreign_write: return foreign(r, true);
    case proto::foreign_map: return foreign_map(r);
    case proto::foreign_unmap: return foreign_unmap(r);
    case proto::mapped_read: return mapped(r, false);
    case proto::mapped_write: return mapped(r, true);
    case proto::evtchn_bind_virq: return bind_virq(r);
    case proto::evtchn_bind_interdomain: return bind_interdomain(r);
    case proto::evtchn_notify:
    case proto::evtchn_unmask:
    case proto::evtchn_close: return port_op(r);
    case proto::shutdown: return shutdown(r);
    default: return send_error(r, Error::unknown_type, r.type);
  }
}

void Server::reset_session() {
  for (uint32_t i = 0; i < BufferTable::kMaxBuffers; ++i) {
    BufferTable::Buffer b = buffers_.slot(i);
    if (!b.pages) continue;
    BufferTable::Buffer removed;
    buffers_.remove(b.address, removed);
    backend_.unmap_buffer(removed.address, removed.pages);
  }
  for (uint32_t slot = 0; slot < MappingTable::kMaxMappings; ++slot) {
    if (!mappings_.slot(slot).handle) continue;
    backend_.unmap_foreign(slot);
    mappings_.remove(slot);
  }
  while (port_count_) {
    uint32_t port = ports_[port_count_ - 1];
    backend_.close(port);
    remove_port(port);
  }
}

void Server::open(Request& r) {
  uint32_t version = r.fields.u32();
  if (!r.fields.done()) return send_error(r, Error::malformed, r.length);
  if (version != proto::kProtocolVersion) return send_error(r, Error::version, proto::kProtocolVersion);
  // A new session: whatever an earlier client left behind goes (it may have died).
  reset_session();
  open_ = true;
  expected_ = r.seq + 1;
  session_channel_ = r.channel;
  proto::Writer w = response(r.seq);
  w.u32(proto::kProtocolVersion).u32(proto::kMaxRequestPayload).u32(proto::kMaxData);
  w.u32(BufferTable::kMaxBuffers).u32(BufferTable::kWindowPages).u32(flags_);
  answer(r, proto::opened, w);
  backend_.session_opened();
}

void Server::hypercall(Request& r) {
  uint32_t number = r.fields.u32();
  uint64_t args[5];
  for (uint64_t& a : args) a = r.fields.u64();
  if (!r.fields.done()) return send_error(r, Error::malformed, r.length);
  proto::Refusal refusal = check_hypercall(number, args, buffers_);
  if (refusal != proto::Refusal::none) return send_error(r, Error::refused, int64_t(refusal));
  long value = backend_.hypercall(number, args);
  proto::Writer w = response(r.seq);
  w.u64(uint64_t(value));
  answer(r, proto::result, w);
}

void Server::send_buffer_status(const Request& r, BufferTable::Status status, uint64_t address) {
  switch (status) {
    case BufferTable::Status::no_buffer: return send_error(r, Error::no_buffer, int64_t(address));
    case BufferTable::Status::bad_range: return send_error(r, Error::bad_range, int64_t(address));
    case BufferTable::Status::limit: return send_error(r, Error::limit, 0);
    case BufferTable::Status::ok: break;
  }
}

void Server::buffer_alloc(Request& r) {
  uint32_t pages = r.fields.u32();
  if (!r.fields.done()) return send_error(r, Error::malformed, r.length);
  uint64_t address = 0;
  BufferTable::Status s = buffers_.place(pages, address);
  if (s != BufferTable::Status::ok) return send_buffer_status(r, s, pages);
  uint8_t* data = backend_.map_buffer(address, pages);
  if (!data) return send_error(r, Error::no_memory, pages);
  buffers_.insert(address, pages, data);
  proto::Writer w = response(r.seq);
  w.u32(pages).u64(address);
  answer(r, proto::buffer, w);
}

void Server::buffer_free(Request& r) {
  uint64_t address = r.fields.u64();
  if (!r.fields.done()) return send_error(r, Error::malformed, r.length);
  BufferTable::Buffer removed;
  if (buffers_.remove(address, removed) != BufferTable::Status::ok)
    return send_error(r, Error::no_buffer, int64_t(address));
  backend_.unmap_buffer(removed.address, removed.pages);
  proto::Writer w = response(r.seq);
  answer(r, proto::ok, w);
}

void Server::buffer_write(Request& r) {
  uint64_t address = r.fields.u64();
  if (!r.fields.ok()) return send_error(r, Error::malformed, r.length);
  BufferTable::Status s = buffers_.write(address, r.fields.rest(), r.fields.remaining());
  if (s != BufferTable::Status::ok) return send_buffer_status(r, s, address);
  proto::Writer w = response(r.seq);
  answer(r, proto::ok, w);
}

void Server::buffer_read(Request& r) {
  uint64_t address = r.fields.u64();
  uint32_t length = r.fields.u32();
  if (!r.fields.done()) return send_error(r, Error::malformed, r.length);
  if (length > proto::kMaxData) return send_error(r, Error::bad_range, length);
  BufferTable::Status s = buffers_.read(address, data_, length);
  if (s != BufferTable::Status::ok) return send_buffer_status(r, s, address);
  proto::Writer w = response(r.seq);
  w.bytes(data_, length);
  answer(r, proto::data, w);
}

void Server::foreign(Request& r, bool write) {
  uint32_t domid = r.fields.u32();
  uint64_t frame = r.fields.u64();
  uint32_t offset = r.fields.u32();
  uint32_t length = write ? uint32_t(r.fields.remaining()) : r.fields.u32();
  if (write ? !r.fields.ok() : !r.fields.done()) return send_error(r, Error::malformed, r.length);
  proto::Refusal refusal = check_foreign_access(domid, write);
  if (refusal != proto::Refusal::none) return send_error(r, Error::refused, int64_t(refusal));
  if (frame > kMaxFrame) return send_error(r, Error::bad_range, int64_t(frame));
  if (!within_page(offset, length)) return send_error(r, Error::bad_range, offset);
  if (write) __builtin_memcpy(data_, r.fields.rest(), length);
  long rc = backend_.foreign_copy(uint16_t(domid), frame, offset, data_, length, write);
  if (rc < 0) return send_error(r, Error::hypervisor, rc);
  proto::Writer w = response(r.seq);
  if (!write) w.bytes(data_, length);
  answer(r, write ? proto::ok : proto::data, w);
}

void Server::foreign_map(Request& r) {
  uint32_t domid = r.fields.u32();
  uint64_t frame = r.fields.u64();
  if (!r.fields.done()) return send_error(r, Error::malformed, r.length);
  proto::Refusal refusal = check_foreign_map(domid);
  if (refusal != proto::Refusal::none) return send_error(r, Error::refused, int64_t(refusal));
  if (frame > kMaxFrame) return send_error(r, Error::bad_range, int64_t(frame));
  uint32_t slot = 0;
  switch (mappings_.reserve(uint16_t(domid), slot)) {
    case MappingTable::Status::limit_total: return send_error(r, Error::limit, MappingTable::kMaxMappings);
    case MappingTable::Status::limit_domain: return send_error(r, Error::limit, MappingTable::kMaxPerDomain);
    default: break;
  }
  long rc = backend_.map_foreign(slot, uint16_t(domid), frame);
  if (rc < 0) return send_error(r, Error::hypervisor, rc);
  uint32_t handle = mappings_.insert(slot, uint16_t(domid), frame);
  answer_u32(r, proto::mapping, handle);
}

void Server::foreign_unmap(Request& r) {
  uint32_t handle = r.fields.u32();
  if (!r.fields.done()) return send_error(r, Error::malformed, r.length);
  uint32_t slot = 0;
  if (mappings_.find(handle, slot) != MappingTable::Status::ok) return send_error(r, Error::no_mapping, handle);
  backend_.unmap_foreign(slot);
  mappings_.remove(slot);
  proto::Writer w = response(r.seq);
  answer(r, proto::ok, w);
}

void Server::mapped(Request& r, bool write) {
  uint32_t handle = r.fields.u32();
  uint32_t offset = r.fields.u32();
  uint32_t length = write ? uint32_t(r.fields.remaining()) : r.fields.u32();
  if (write ? !r.fields.ok() : !r.fields.done()) return send_error(r, Error::malformed, r.length);
  uint32_t slot = 0;
  if (mappings_.find(handle, slot) != MappingTable::Status::ok) return send_error(r, Error::no_mapping, handle);
  if (!within_page(offset, length)) return send_error(r, Error::bad_range, offset);
  uint8_t* page = backend_.mapped_page(slot) + offset;
  proto::Writer w = response(r.seq);
  if (write)
    __builtin_memcpy(page, r.fields.rest(), length);
  else
    w.bytes(page, length);
  answer(r, write ? proto::ok : proto::data, w);
}

int Server::find_port(uint32_t port) const {
  for (uint32_t i = 0; i < port_count_; ++i)
    if (ports_[i] == port) return int(i);
  return -1;
}

bool Server::add_port(uint32_t port) {
  if (port_count_ == kMaxPorts) return false;
  ports_[port_count_++] = port;
  return true;
}

void Server::remove_port(uint32_t port) {
  int i = find_port(port);
  if (i < 0) return;
  ports_[i] = ports_[--port_count_];
}

void Server::bind_virq(Request& r) {
  uint32_t virq = r.fields.u32();
  if (!r.fields.done()) return send_error(r, Error::malformed, r.length);
  if (port_count_ == kMaxPorts) return send_error(r, Error::limit, kMaxPorts);
  uint32_t port = 0;
  long rc = backend_.bind_virq(virq, port);
  if (rc < 0) return send_error(r, Error::hypervisor, rc);
  add_port(port);
  answer_u32(r, proto::port, port);
}

void Server::bind_interdomain(Request& r) {
  uint32_t remote_domain = r.fields.u32();
  uint32_t remote_port = r.fields.u32();
  if (!r.fields.done()) return send_error(r, Error::malformed, r.length);
  if (remote_domain > 0xffff) return send_error(r, Error::bad_range, remote_domain);
  if (port_count_ == kMaxPorts) return send_error(r, Error::limit, kMaxPorts);
  uint32_t port = 0;
  long rc = backend_.bind_interdomain(uint16_t(remote_domain), remote_port, port);
  if (rc < 0) return send_error(r, Error::hypervisor, rc);
  add_port(port);
  answer_u32(r, proto::port, port);
}

void Server::port_op(Request& r) {
  uint32_t port = r.fields.u32();
  if (!r.fields.done()) return send_error(r, Error::malformed, r.length);
  // Only ports the host bound: the kernel's own (timer, trace buffers) are not the host's.
  if (!owns_port(port)) return send_error(r, Error::no_port, port);
  long rc = r.type == proto::evtchn_notify   ? backend_.notify(port)
            : r.type == proto::evtchn_unmask ? backend_.unmask(port)
                                             : backend_.close(port);
  if (r.type == proto::evtchn_close) remove_port(port);  // gone either way
  if (rc < 0) return send_error(r, Error::hypervisor, rc);
  proto::Writer w = response(r.seq);
  answer(r, proto::ok, w);
}

void Server::shutdown(Request& r) {
  uint32_t reason = r.fields.u32();
  if (!r.fields.done()) return send_error(r, Error::malformed, r.length);
  // SHUTDOWN_poweroff, _reboot or _crash: the reasons that end a domain (Xen refuses others).
  if (reason != 0 && reason != 1 && reason != 3) return send_error(r, Error::bad_range, reason);
  proto::Writer w = response(r.seq);
  answer(r, proto::ok, w);
  backend_.shutdown(reason);
}

bool Server::handle_event(uint32_t port) {
  if (!owns_port(port)) return false;
  uint8_t payload[4];
  proto::Writer w(payload, sizeof(payload));
  w.u32(port);
  ++stats_.events;
  sink_.send(proto::event, session_channel_, payload, uint32_t(w.size()));
  return true;
}

}  // namespace lib::relay
