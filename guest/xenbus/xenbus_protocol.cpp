#include "xenbus/xenbus_protocol.h"

#include <xen/sched.h>

namespace lib {
namespace {

size_t length_of(const char* s) {
  size_t n = 0;
  while (s[n]) ++n;
  return n;
}

void copy(uint8_t* to, const void* from, size_t n) {
  const uint8_t* f = static_cast<const uint8_t*>(from);
  for (size_t i = 0; i < n; ++i) to[i] = f[i];
}

bool equal(const char* a, size_t a_length, const char* b) {
  size_t b_length = length_of(b);
  if (a_length != b_length) return false;
  for (size_t i = 0; i < a_length; ++i)
    if (a[i] != b[i]) return false;
  return true;
}

}  // namespace

size_t xenbus_build(uint8_t* out, size_t capacity, uint32_t type, uint32_t req_id, const char* const* args,
                    size_t count, bool last_raw) {
  size_t payload = 0;
  for (size_t i = 0; i < count; ++i) payload += length_of(args[i]) + ((last_raw && i + 1 == count) ? 0 : 1);
  if (payload > XENSTORE_PAYLOAD_MAX || sizeof(xsd_sockmsg) + payload > capacity) return 0;
  xsd_sockmsg header{type, req_id, 0, static_cast<uint32_t>(payload)};
  copy(out, &header, sizeof header);
  size_t at = sizeof header;
  for (size_t i = 0; i < count; ++i) {
    size_t n = length_of(args[i]);
    copy(out + at, args[i], n);
    at += n;
    if (!(last_raw && i + 1 == count)) out[at++] = 0;
  }
  return at;
}

size_t xenbus_ring_write(volatile xenstore_domain_interface* ring, const uint8_t* data, size_t length) {
  XENSTORE_RING_IDX consumer = ring->req_cons, producer = ring->req_prod;
  __atomic_thread_fence(__ATOMIC_ACQUIRE);
  XENSTORE_RING_IDX used = producer - consumer;
  if (used > XENSTORE_RING_SIZE) return 0;
  size_t space = XENSTORE_RING_SIZE - used, n = length < space ? length : space;
  for (size_t i = 0; i < n; ++i) ring->req[MASK_XENSTORE_IDX(producer + i)] = static_cast<char>(data[i]);
  __atomic_thread_fence(__ATOMIC_RELEASE);  // the bytes before the index that publishes them
  ring->req_prod = producer + static_cast<XENSTORE_RING_IDX>(n);
  return n;
}

size_t xenbus_ring_read(volatile xenstore_domain_interface* ring, uint8_t* out, size_t capacity) {
  XENSTORE_RING_IDX consumer = ring->rsp_cons, producer = ring->rsp_prod;
  __atomic_thread_fence(__ATOMIC_ACQUIRE);
  XENSTORE_RING_IDX available = producer - consumer;
  if (available > XENSTORE_RING_SIZE) return 0;
  size_t n = available < capacity ? available : capacity;
  for (size_t i = 0; i < n; ++i) out[i] = static_cast<uint8_t>(ring->rsp[MASK_XENSTORE_IDX(consumer + i)]);
  __atomic_thread_fence(__ATOMIC_RELEASE);  // read the bytes before giving their room back
  ring->rsp_cons = consumer + static_cast<XENSTORE_RING_IDX>(n);
  return n;
}

size_t XenbusReader::push(const uint8_t* data, size_t length) {
  if (broken_) return 0;
  if (length > room()) length = room();
  copy(buffer_ + used_, data, length);
  used_ += length;
  return length;
}

bool XenbusReader::next(xsd_sockmsg& header, const char*& payload) {
  if (broken_ || used_ < sizeof header) return false;
  copy(reinterpret_cast<uint8_t*>(&header), buffer_, sizeof header);
  if (header.len > XENSTORE_PAYLOAD_MAX) {
    broken_ = true;
    return false;
  }
  size_t whole = sizeof header + header.len;
  if (used_ < whole) return false;
  copy(reinterpret_cast<uint8_t*>(payload_), buffer_ + sizeof header, header.len);
  payload_[header.len] = 0;
  for (size_t i = whole; i < used_; ++i) buffer_[i - whole] = buffer_[i];
  used_ -= whole;
  payload = payload_;
  return true;
}

ShutdownAction parse_shutdown_request(const char* value, size_t length) {
  if (equal(value, length, "poweroff") || equal(value, length, "halt")) return ShutdownAction::poweroff;
  if (equal(value, length, "reboot")) return ShutdownAction::reboot;
  return ShutdownAction::none;
}

unsigned shutdown_reason(ShutdownAction action) {
  return action == ShutdownAction::reboot ? SHUTDOWN_reboot : SHUTDOWN_poweroff;
}

void ShutdownWatcher::send(Output& out, uint32_t type, const char* const* args, size_t count, bool last_raw,
                           uint32_t& id_slot) {
  uint32_t id = next_id_++;
  size_t n = xenbus_build(out.bytes + out.length, sizeof out.bytes - out.length, type, id, args, count, last_raw);
  if (n == 0) return;
  out.length += n;
  id_slot = id;
}

void ShutdownWatcher::start(Output& out) {
  uint32_t ignored;
  // Linux advertises what it obeys; the toolstack made these nodes ours.
  const char* poweroff[] = {"control/feature-poweroff", "1"};
  send(out, XS_WRITE, poweroff, 2, true, ignored);
  const char* reboot[] = {"control/feature-reboot", "1"};
  send(out, XS_WRITE, reboot, 2, true, ignored);
  const char* watch[] = {"control/shutdown", kToken};
  send(out, XS_WATCH, watch, 2, false, ignored);
}

void ShutdownWatcher::on_message(const xsd_sockmsg& header, const char* payload, Output& out) {
  if (action_ != ShutdownAction::none) return;
  if (header.type == XS_WATCH_EVENT) {
    // path NUL token NUL: ours is the only watch, but check the token as Linux matches it.
    size_t path_length = length_of(payload);
    if (path_length + 1 >= header.len) return;
    const char* token = payload + path_length + 1;
    if (!equal(token, header.len - path_length - 2, kToken)) return;
    const char* read[] = {"control/shutdown"};
    send(out, XS_READ, read, 1, false, read_id_);
    return;
  }
  if (header.req_id == read_id_ && read_id_ != 0) {
    read_id_ = 0;
    if (header.type != XS_READ) return;  // gone or refused: nothing asked
    requested_ = parse_shutdown_request(payload, header.len);
    if (header.len == 0) return;  // our own clearing, or an empty node
    const char* clear[] = {"control/shutdown", ""};
    send(out, XS_WRITE, clear, 2, true, clear_id_);
    return;
  }
  if (header.req_id == clear_id_ && clear_id_ != 0) {
    clear_id_ = 0;
    // Linux acts only once the node is cleared.
    if (header.type == XS_WRITE) action_ = requested_;
  }
}

}  // namespace lib
