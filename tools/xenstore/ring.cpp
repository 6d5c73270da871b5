// The server's end of a domain's xenstore ring (xenstore.h, RingConnection).
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

  // Requests: take what is there, in at most two pieces (the ring wraps).
  XENSTORE_RING_IDX available = req_prod - req_cons_;
  while (available > 0) {
    uint32_t offset = MASK_XENSTORE_IDX(req_cons_);
    uint32_t chunk = std::min<uint32_t>(available, XENSTORE_RING_SIZE - offset);
    parser_.push(std::string_view(page.req + offset, chunk));
    req_cons_ += chunk;
    available -= chunk;
    result.notify = true;
  }
  if (parser_.state() == MessageParser::State::error) return fail(XENSTORE_ERROR_PROTO);
  while (auto request = parser_.next()) store_.handle(conn_, *request);

  // Answers and events: serialized in order, written while there is room; the rest waits.
  for (auto& m : store_.take_output(conn_)) out_ += serialize(m);
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

}  // namespace xenstore
