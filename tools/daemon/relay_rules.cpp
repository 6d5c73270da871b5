#include "tools/daemon/relay_rules.h"

#include "common/relay/protocol.h"

namespace pvhv::daemon {
namespace {
namespace proto = ::relay;

void put32(std::vector<uint8_t>& out, uint64_t v) {
  for (int i = 0; i < 4; ++i) out.push_back(uint8_t(v >> (8 * i)));
}
void put64(std::vector<uint8_t>& out, uint64_t v) {
  for (int i = 0; i < 8; ++i) out.push_back(uint8_t(v >> (8 * i)));
}

// The payload size after the sequence number each request must have (data requests: at least).
bool well_formed(uint8_t type, uint32_t fields) {
  switch (type) {
    case proto::hypercall: return fields == 4 + 5 * 8;
    case proto::buffer_alloc: return fields == 4;
    case proto::buffer_free: return fields == 8;
    case proto::buffer_write: return fields >= 8 && fields - 8 <= proto::kMaxData;
    case proto::buffer_read: return fields == 12;
    case proto::foreign_read: return fields == 20;
    case proto::foreign_write: return fields >= 16 && fields - 16 <= proto::kPageBytes;
    case proto::foreign_map: return fields == 12;
    case proto::foreign_unmap: return fields == 4;
    case proto::mapped_read: return fields == 12;
    case proto::mapped_write: return fields >= 8 && fields - 8 <= proto::kPageBytes;
    case proto::evtchn_bind_virq: return fields == 4;
    case proto::evtchn_bind_interdomain: return fields == 8;
    case proto::evtchn_notify:
    case proto::evtchn_unmask:
    case proto::evtchn_close:
    case proto::shutdown: return fields == 4;
    default: return false;
  }
}
}  // namespace

RelayDecision RelayRules::error(uint32_t seq, uint32_t code, uint8_t type, int64_t detail) const {
  RelayDecision d;
  d.kind = RelayDecision::Kind::answer;
  d.type = proto::error;
  put32(d.payload, seq);
  put32(d.payload, code);
  put32(d.payload, type);
  put64(d.payload, uint64_t(detail));
  return d;
}

bool RelayRules::owns_range(uint64_t address, uint64_t length) const {
  auto it = buffers_.upper_bound(address);
  if (it == buffers_.begin()) return false;
  --it;
  uint64_t end = it->first + uint64_t(it->second) * proto::kPageBytes;
  return address >= it->first && length <= end - address;
}

RelayDecision RelayRules::on_request(uint8_t type, const uint8_t* payload, uint32_t length) {
  RelayDecision drop;
  if (!proto::is_request(type)) {
    drop.why = "a frame that is no request";
    return drop;
  }
  proto::Reader r(payload, length);
  uint32_t seq = r.u32();
  if (!r.ok()) return error(proto::kNoSequence, uint32_t(proto::Error::malformed), type, length);
  uint32_t fields = length - 4;
  if (type == proto::open) {
    uint32_t version = r.u32();
    if (!r.done()) return error(seq, uint32_t(proto::Error::malformed), type, length);
    if (version != proto::kProtocolVersion)
      return error(seq, uint32_t(proto::Error::version), type, proto::kProtocolVersion);
    bool again = session_;
    session_ = true;
    next_seq_ = seq + 1;
    RelayDecision d;
    d.kind = RelayDecision::Kind::answer;
    d.type = proto::opened;
    d.release_first = again;
    put32(d.payload, seq);
    put32(d.payload, proto::kProtocolVersion);
    put32(d.payload, proto::kMaxRequestPayload);
    put32(d.payload, proto::kMaxData);
    put32(d.payload, 64);    // buffers: the relay's, shared by every client
    put32(d.payload, 1024);  // buffer pages
    put32(d.payload, 0);     // flags: no trace records, no window on this path
    return d;
  }
  if (!session_) return error(seq, uint32_t(proto::Error::no_session), type, 0);
  if (seq != next_seq_) return error(seq, uint32_t(proto::Error::out_of_order), type, next_seq_);
  ++next_seq_;  // used up whatever its answer, as the relay's
  if (!well_formed(type, fields)) return error(seq, uint32_t(proto::Error::malformed), type, length);
  switch (type) {
    case proto::shutdown: drop.why = "SHUTDOWN (dom0 is the daemon's to stop)"; return drop;
    case proto::buffer_free: {
      uint64_t address = r.u64();
      if (!buffers_.count(address)) {
        drop.why = "BUFFER_FREE of a buffer not its own";
        return drop;
      }
      break;
    }
    case proto::buffer_write:
    case proto::buffer_read: {
      uint64_t address = r.u64();
      uint64_t size = type == proto::buffer_read ? r.u32() : fields - 8;
      if (!owns_range(address, size)) {
        drop.why = "a buffer range not its own";
        return drop;
      }
      break;
    }
    case proto::evtchn_notify:
    case proto::evtchn_unmask:
    case proto::evtchn_close:
      if (!owns_port(r.u32())) {
        drop.why = "a port not its own";
        return drop;
      }
      break;
    case proto::foreign_unmap:
    case proto::mapped_read:
    case proto::mapped_write: {
      // Answered as the relay answers a handle that names nothing: another client's mapping
      // (the daemon's of the domains' rings among them) is no mapping of this one.
      uint32_t handle = r.u32();
      if (!owns_mapping(handle)) return error(seq, uint32_t(proto::Error::no_mapping), type, handle);
      break;
    }
    default: break;
  }
  in_flight_seq_ = seq;
  RelayDecision d;
  d.kind = RelayDecision::Kind::forward;
  d.type = type;
  d.payload.assign(payload + 4, payload + length);
  return d;
}

RelayDecision RelayRules::on_answer(uint8_t request_type, const std::vector<uint8_t>& request_fields,
                                    uint8_t answer_type, const std::vector<uint8_t>& answer_fields) {
  proto::Reader a(answer_fields.data(), answer_fields.size());
  proto::Reader q(request_fields.data(), request_fields.size());
  if (request_type == proto::buffer_alloc && answer_type == proto::buffer) {
    uint32_t pages = a.u32();
    uint64_t address = a.u64();
    if (a.ok()) buffers_[address] = pages;
  } else if (request_type == proto::buffer_free && answer_type == proto::ok) {
    buffers_.erase(q.u64());
  } else if ((request_type == proto::evtchn_bind_virq || request_type == proto::evtchn_bind_interdomain) &&
             answer_type == proto::port) {
    uint32_t port = a.u32();
    if (a.ok()) ports_.insert(port);
  } else if (request_type == proto::evtchn_close) {
    ports_.erase(q.u32());  // gone whatever the answer, as the relay removes it
  } else if (request_type == proto::foreign_map && answer_type == proto::mapping) {
    uint32_t handle = a.u32();
    if (a.ok()) mappings_.insert(handle);
  } else if (request_type == proto::foreign_unmap) {
    mappings_.erase(q.u32());
  }
  RelayDecision d;
  d.kind = RelayDecision::Kind::answer;
  d.type = answer_type;
  put32(d.payload, in_flight_seq_);
  d.payload.insert(d.payload.end(), answer_fields.begin(), answer_fields.end());
  return d;
}

RelayDecision RelayRules::on_link_failure(uint8_t request_type, int error_number) {
  // The daemon's link did not answer: to the client, the hypervisor-side failure it would see
  // from a relay that gave up (its library turns `hypervisor` with -errno into that errno).
  return error(in_flight_seq_, uint32_t(proto::Error::hypervisor), request_type, -int64_t(error_number));
}

}  // namespace pvhv::daemon
