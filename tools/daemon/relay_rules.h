// What pvhvd does with each frame a `relay` client sends (pure, unit-tested:
// tests/unit/daemon_relay_rules_test.cpp; tools/PROTOCOL.md "The relay op").
//
// The client speaks the relay protocol as to dom0; the daemon answers its OPEN itself (the link
// has one session, the daemon's), keeps its sequence numbers as the relay would (out_of_order,
// no_session), and forwards each other request on its own session under the library's number.
// What the link grants the client (buffers, ports, lasting mappings) is recorded here, so the
// client may only name its own: a mapping of another client (the daemon's own of the domains'
// rings included) is answered as none (`no_mapping`); a buffer or port of another client, a
// frame that is no request, or SHUTDOWN (dom0's life is the daemon's) gets the client dropped.
// What it holds is released when it goes.
#pragma once
#include <cstdint>
#include <map>
#include <set>
#include <vector>

namespace pvhv::daemon {

struct RelayDecision {
  enum class Kind { answer, forward, drop };
  Kind kind = Kind::drop;
  // answer: the frame for the client; forward: the request (fields after the sequence number).
  uint8_t type = 0;
  std::vector<uint8_t> payload;
  bool release_first = false;  // a second OPEN: what the client held goes first (the relay's rule)
  const char* why = "";        // drop: for the daemon's log
};

class RelayRules {
 public:
  RelayDecision on_request(uint8_t type, const uint8_t* payload, uint32_t length);
  // The link's answer to the request forwarded last (`type`, fields after its number): what it
  // grants is recorded; the frame for the client (its own number in front) is returned.
  RelayDecision on_answer(uint8_t request_type, const std::vector<uint8_t>& request_fields, uint8_t answer_type,
                          const std::vector<uint8_t>& answer_fields);
  // No answer came (the link failed): the client gets the relay's error for it.
  RelayDecision on_link_failure(uint8_t request_type, int error);

  bool owns_port(uint32_t port) const { return ports_.count(port) != 0; }
  bool owns_mapping(uint32_t handle) const { return mappings_.count(handle) != 0; }
  const std::map<uint64_t, uint32_t>& buffers() const { return buffers_; }  // address -> pages
  const std::set<uint32_t>& ports() const { return ports_; }
  const std::set<uint32_t>& mappings() const { return mappings_; }  // handles
  void forget_all() {
    buffers_.clear();
    ports_.clear();
    mappings_.clear();
  }

 private:
  bool owns_range(uint64_t address, uint64_t length) const;
  RelayDecision error(uint32_t seq, uint32_t code, uint8_t type, int64_t detail) const;

  bool session_ = false;
  uint32_t next_seq_ = 0;
  uint32_t in_flight_seq_ = 0;  // the client's number of the request forwarded
  std::map<uint64_t, uint32_t> buffers_;
  std::set<uint32_t> ports_;
  std::set<uint32_t> mappings_;
};

}  // namespace pvhv::daemon
