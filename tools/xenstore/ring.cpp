// The server's end of a domain's xenstore ring (xenstore.h, RingConnection).
#include <stddef.h>
#include <string.h>

#include <algorithm>

#include "tools/xenstore/xenstore.h"

namespace xenstore {

RingConnection::RingConnection(Store& store, DomId domid) : store_(store), conn_(store.connect(domid)) {}
RingConnection::~RingConnection() { store_.disconnect(conn_); }

RingConnection::Result RingConnection::serve(xenstore_domain_interface& page) {
  Result result;
  if (broken_) {
    result.broken = true;
    return result;
  }
  // The guest's indices, read once: it may change its page at any time.
  const XENSTORE_RING_IDX req_prod = page.req_prod;
  const XENSTORE_RING_IDX rsp_cons = page.rsp_cons;
  auto fail = [&](uint32_t error) {
    broken_ = true;
    page.error = error;
    result.broken = true;
    result.page_changed = true;
    return result;
  };
  if (req_prod - req_cons_ > XENSTORE_RING_SIZE || rsp_prod_ - rsp_cons > XENSTORE_RING_SIZE)
    return fail(XENSTORE_ERROR_RINGIDX);

  // Requests: whole messages are taken off the ring, a partial one left in it (a server that
  // takes over the ring after a restart finds it there); only a message longer than the ring
  // has to be taken in pieces. None while answers pile up unread (kMaxPendingOutput).
  XENSTORE_RING_IDX available = req_prod - req_cons_;
  auto ring_bytes = [&](XENSTORE_RING_IDX from, uint32_t n) {
    std::string bytes;
    for (uint32_t done = 0; done < n;) {
      uint32_t offset = MASK_XENSTORE_IDX(from + done);
      uint32_t chunk = std::min<uint32_t>(n - done, XENSTORE_RING_SIZE - offset);
      bytes.append(page.req + offset, chunk);
      done += chunk;
    }
    return bytes;
  };
  while (available > 0 && out_.size() < kMaxPendingOutput && parser_.state() == MessageParser::State::ok) {
    uint32_t take = available;  // a message already in pieces in the parser, or longer than the ring
    if (parser_.buffered() == 0) {
      if (available < sizeof(xsd_sockmsg)) break;
      xsd_sockmsg header;
      std::string head = ring_bytes(req_cons_, sizeof header);
      memcpy(&header, head.data(), sizeof header);
      uint64_t whole = sizeof header + uint64_t(header.len);
      if (whole <= available)
        take = static_cast<uint32_t>(whole);
      else if (whole <= XENSTORE_RING_SIZE && header.len <= XENSTORE_PAYLOAD_MAX)
        break;  // the rest is still to come
    }
    parser_.push(ring_bytes(req_cons_, take));
    req_cons_ += take;
    available -= take;
    result.notify = true;
    while (auto request = parser_.next()) store_.handle(conn_, *request);
    for (auto& m : store_.take_output(conn_)) {
      if (m.type == XS_ERROR) ++errors_answered_, last_error_ = m.payload.substr(0, m.payload.find('\0'));
      out_ += serialize(m);
    }
  }
  if (parser_.state() == MessageParser::State::error) return fail(XENSTORE_ERROR_PROTO);

  // Answers and events: serialized in order, written while there is room; the rest waits.
  for (auto& m : store_.take_output(conn_)) out_ += serialize(m);  // watch events the store queued
  XENSTORE_RING_IDX space = XENSTORE_RING_SIZE - (rsp_prod_ - rsp_cons);
  size_t written = 0;
  while (space > 0 && written < out_.size()) {
    uint32_t offset = MASK_XENSTORE_IDX(rsp_prod_);
    uint32_t chunk =
        std::min<uint32_t>({space, XENSTORE_RING_SIZE - offset, static_cast<uint32_t>(out_.size() - written)});
    memcpy(page.rsp + offset, out_.data() + written, chunk);
    rsp_prod_ += chunk;
    space -= chunk;
    written += chunk;
    result.notify = true;
  }
  out_.erase(0, written);
  page.req_cons = req_cons_;
  page.rsp_prod = rsp_prod_;
  result.page_changed = result.notify;
  return result;
}

void RingConnection::resume(const xenstore_domain_interface& page) {
  req_cons_ = page.req_cons;
  rsp_prod_ = page.rsp_prod;
}

bool RingConnection::wants_service(XENSTORE_RING_IDX req_prod, XENSTORE_RING_IDX rsp_cons) const {
  if (broken_) return false;
  if (req_prod - req_cons_ > XENSTORE_RING_SIZE || rsp_prod_ - rsp_cons > XENSTORE_RING_SIZE) return true;  // a lie
  if (req_prod != req_cons_ && out_.size() < kMaxPendingOutput) return true;
  bool room = rsp_prod_ - rsp_cons < XENSTORE_RING_SIZE;
  return room && (!out_.empty() || store_.has_output(conn_));
}

static_assert(offsetof(xenstore_domain_interface, req_prod) == offsetof(xenstore_domain_interface, req_cons) + 4);
static_assert(offsetof(xenstore_domain_interface, rsp_prod) == offsetof(xenstore_domain_interface, req_cons) + 12);

RingPageRead read_ring_page(const RingPageReader& read, const std::function<bool(const RingIndexes&)>& wanted,
                            RingIndexes& seen, xenstore_domain_interface& page) {
  if (!read(offsetof(xenstore_domain_interface, req_cons), &seen, sizeof seen)) return RingPageRead::failed;
  if (!wanted(seen)) return RingPageRead::not_wanted;
  if (!read(0, &page, sizeof page)) return RingPageRead::failed;
  page.req_prod = seen.req_prod;
  seen.rsp_cons = page.rsp_cons;  // newer is safe: it only frees room for answers
  return RingPageRead::read;
}

}  // namespace xenstore
