#include "tools/daemon/relay_forward.h"

#include <xenctrl_pvhv.h>

#include <array>
#include <cerrno>
#include <deque>
#include <chrono>
#include <cstring>
#include <vector>

#include "tools/daemon/relay_rules.h"
#include "common/relay/frame_receiver.h"

namespace pvhv::daemon {
namespace asio = boost::asio;
namespace proto = ::relay;

namespace {
uint64_t now_ms() {
  using namespace std::chrono;
  return uint64_t(duration_cast<milliseconds>(steady_clock::now().time_since_epoch()).count());
}

std::string encode(uint8_t type, const std::vector<uint8_t>& payload) {
  std::string out(proto::frame::kHeaderBytes, '\0');
  proto::frame::encode_header(reinterpret_cast<uint8_t*>(out.data()), type, 0, payload.data(),
                              uint32_t(payload.size()));
  out.append(reinterpret_cast<const char*>(payload.data()), payload.size());
  return out;
}

struct Forwarded {
  int rc = 0;
  int error = 0;
  uint8_t answer_type = 0;
  std::vector<uint8_t> answer;
};

Forwarded forward(xc_interface* xch, uint8_t type, const std::vector<uint8_t>& fields) {
  Forwarded f;
  f.answer.resize(proto::kMaxData + 64);
  size_t length = f.answer.size();
  f.rc = pvhv_xc_relay_forward(xch, type, fields.data(), fields.size(), &f.answer_type, f.answer.data(), &length);
  f.error = errno;
  f.answer.resize(f.rc == 0 ? length : 0);
  return f;
}
}  // namespace

class RelaySession : public std::enable_shared_from_this<RelaySession> {
 public:
  RelaySession(RelayForwarder& owner, std::shared_ptr<void> keepalive, RelayForwarder::Socket& socket,
               std::function<void()> close, uint64_t id)
      : owner_(owner),
        keepalive_(std::move(keepalive)),
        socket_(socket),
        close_(std::move(close)),
        id_(id),
        storage_(proto::frame::kHeaderBytes + proto::kMaxRequestPayload),
        receiver_(storage_.data(), storage_.size(), proto::kMaxRequestPayload, 10000) {}

  void start(std::string early) {
    push(reinterpret_cast<const uint8_t*>(early.data()), early.size());
    process();
  }

  bool owns_port(uint32_t port) const { return rules_.owns_port(port); }
  void link_gone(const std::string& why) {
    rules_.forget_all();  // freed by the relay with the old session
    drop(why);
  }
  void event(uint32_t port) {
    std::vector<uint8_t> payload{uint8_t(port), uint8_t(port >> 8), uint8_t(port >> 16), uint8_t(port >> 24)};
    send(encode(proto::event, payload));
  }

 private:
  void push(const uint8_t* data, size_t n) {
    while (n) {
      size_t taken = receiver_.push(data, n, now_ms());
      data += taken;
      n -= taken;
      if (!taken) return;  // full: next() empties it first (a client cannot outrun one frame)
    }
  }

  // Takes frames while no request is in flight; reads more when there are none.
  void process() {
    while (!busy_ && !closed_) {
      proto::Received r = receiver_.next(now_ms());
      // A client's stream is frames from its first byte: anything skipped is garbage (the
      // receiver would report it only at the next good frame or a pause).
      if (receiver_.skipped_bytes()) return drop("bytes that are no frame");
      if (r.kind == proto::Received::Kind::nothing) return read_more();
      if (r.kind == proto::Received::Kind::error)
        return drop("bytes that are no frame (error " + std::to_string(unsigned(r.error)) + ")");
      RelayDecision d = rules_.on_request(r.type, r.payload, r.length);
      if (d.kind == RelayDecision::Kind::drop) return drop(d.why);
      if (d.release_first) release();
      if (d.kind == RelayDecision::Kind::answer) {
        send(encode(d.type, d.payload));
        continue;
      }
      busy_ = true;
      auto self = shared_from_this();
      uint8_t type = d.type;
      asio::post(owner_.pool_, [self, type, fields = std::move(d.payload)]() mutable {
        Forwarded f = forward(self->owner_.xch_, type, fields);
        asio::post(self->owner_.io_,
                   [self, type, fields = std::move(fields), f = std::move(f)]() { self->answered(type, fields, f); });
      });
      return;
    }
  }

  void answered(uint8_t type, const std::vector<uint8_t>& fields, const Forwarded& f) {
    busy_ = false;
    RelayDecision d =
        f.rc == 0 ? rules_.on_answer(type, fields, f.answer_type, f.answer) : rules_.on_link_failure(type, f.error);
    if (closed_) return release();  // the client went: its answer is dropped, what it granted freed
    send(encode(d.type, d.payload));
    process();
  }

  void read_more() {
    if (reading_ || closed_) return;
    reading_ = true;
    auto self = shared_from_this();
    socket_.async_read_some(asio::buffer(chunk_), [self](boost::system::error_code error, size_t n) {
      self->reading_ = false;
      if (error) return self->finish();
      self->push(self->chunk_.data(), n);
      self->process();
    });
  }

  void send(std::string bytes) {
    if (closed_) return;
    output_.push_back(std::move(bytes));
    if (!writing_) write_next();
  }

  void write_next() {
    if (output_.empty() || closed_) {
      writing_ = false;
      return;
    }
    writing_ = true;
    auto self = shared_from_this();
    asio::async_write(socket_, asio::buffer(output_.front()), [self](boost::system::error_code error, size_t) {
      if (error) return self->finish();
      self->output_.pop_front();
      self->write_next();
    });
  }

  void drop(const std::string& why) {
    owner_.log_("relay client " + std::to_string(id_) + " dropped: " + why);
    finish();
  }

  // The client is gone: its connection closed, what it holds released (now, or when the answer
  // in flight comes back).
  void finish() {
    if (closed_) return;
    closed_ = true;
    close_();
    owner_.sessions_.erase(this);
    if (!busy_) release();
  }

  // BUFFER_FREE, EVTCHN_CLOSE and FOREIGN_UNMAP on the daemon's session for everything the
  // client holds.
  void release() {
    auto buffers = rules_.buffers();
    auto ports = rules_.ports();
    auto mappings = rules_.mappings();
    rules_.forget_all();
    if (buffers.empty() && ports.empty() && mappings.empty()) return;
    xc_interface* xch = owner_.xch_;
    asio::post(owner_.pool_, [xch, buffers, ports, mappings] {
      for (uint32_t handle : mappings) pvhv_xc_foreign_unmap(xch, handle);
      for (const auto& [address, pages] : buffers) {
        std::vector<uint8_t> f;
        for (int i = 0; i < 8; ++i) f.push_back(uint8_t(address >> (8 * i)));
        forward(xch, proto::buffer_free, f);
      }
      for (uint32_t port : ports) pvhv_xc_evtchn_close(xch, port);
    });
  }

  RelayForwarder& owner_;
  std::shared_ptr<void> keepalive_;
  RelayForwarder::Socket& socket_;
  std::function<void()> close_;
  uint64_t id_;
  RelayRules rules_;
  std::vector<uint8_t> storage_;
  proto::FrameReceiver receiver_;
  std::array<uint8_t, 16384> chunk_{};
  std::deque<std::string> output_;
  bool busy_ = false, reading_ = false, writing_ = false, closed_ = false;
};

void RelayForwarder::serve(std::shared_ptr<void> keepalive, Socket& socket, std::string early,
                           std::function<void()> close) {
  auto session = std::make_shared<RelaySession>(*this, std::move(keepalive), socket, std::move(close), next_client_++);
  sessions_[session.get()] = session;
  session->start(std::move(early));
}

void RelayForwarder::drop_all(const std::string& why) {
  for (auto& [raw, weak] : std::map<RelaySession*, std::weak_ptr<RelaySession>>(sessions_))
    if (auto session = weak.lock()) session->link_gone(why);
}

bool RelayForwarder::on_event(uint32_t port) {
  for (auto& [raw, weak] : sessions_)
    if (auto session = weak.lock(); session && session->owns_port(port)) {
      session->event(port);
      return true;
    }
  return false;
}

}  // namespace pvhv::daemon
