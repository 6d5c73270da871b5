#include "tools/libxc/relay_transport.h"

#include "common/relay/window.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <map>
#include <utility>
#include <cerrno>
#include <cstdlib>
#include <string>
#include <chrono>
#include <cstring>
#include <thread>

namespace pvhv::xc {
namespace {
namespace frame = relay::frame;
using relay::Error;

// The host keeps any frame the framing allows (trace frames are up to 1 MiB).
constexpr uint32_t kHostMaxPayload = frame::kMaxPayload;
constexpr uint64_t kStallMs = 10000;
constexpr int kOpenRetryMs = 500;

uint64_t now_ms() {
  using namespace std::chrono;
  return uint64_t(duration_cast<milliseconds>(steady_clock::now().time_since_epoch()).count());
}

void put32(std::vector<uint8_t>& out, uint64_t value) {
  for (int i = 0; i < 4; ++i) out.push_back(uint8_t(value >> (8 * i)));
}
void put64(std::vector<uint8_t>& out, uint64_t value) {
  for (int i = 0; i < 8; ++i) out.push_back(uint8_t(value >> (8 * i)));
}

// The errno a relay error becomes (tools/README.md has the table).
int errno_for(Error code, int64_t detail) {
  switch (code) {
    case Error::hypervisor: return detail < 0 && detail > -4096 ? int(-detail) : EIO;
    case Error::refused: return EPERM;
    case Error::no_buffer: return EFAULT;
    case Error::bad_range: return EINVAL;
    case Error::no_memory: return ENOMEM;
    case Error::limit: return ENOSPC;
    case Error::no_port: return EINVAL;
    case Error::no_mapping: return EBADF;
    case Error::version: return EPROTONOSUPPORT;
    default: return EPROTO;  // the link itself: corrupt, out of order, malformed...
  }
}

bool debugging() {
  const char* v = std::getenv("PVHV_XENCTRL_DEBUG");
  return v && *v && std::strcmp(v, "0") != 0;
}
}  // namespace

RelayTransport::RelayTransport(const RelaySettings& settings)
    : settings_(settings),
      description_((settings.through_daemon ? "daemon:" : "relay:") + settings.socket_path +
                   (settings.window_path.empty() ? "" : " (window " + settings.window_path + ")")),
      storage_(frame::kHeaderBytes + kHostMaxPayload),
      receiver_(storage_.data(), storage_.size(), kHostMaxPayload, kStallMs) {}

RelayTransport::~RelayTransport() {
  if (fd_ >= 0) ::close(fd_);
  if (window_) ::munmap(window_, relay::window::kBytes);
  if (trace_) std::fclose(trace_);
}

std::unique_ptr<RelayTransport> RelayTransport::open(const RelaySettings& settings, std::string& why) {
  std::unique_ptr<RelayTransport> t(new RelayTransport(settings));
  if (!settings.trace_path.empty() && !(t->trace_ = std::fopen(settings.trace_path.c_str(), "ab"))) {
    why = "cannot open PVHV_XENCTRL_TRACE=" + settings.trace_path + ": " + std::strerror(errno);
    return nullptr;
  }
  if (!settings.window_path.empty()) {
    if (t->map_window(settings.open_timeout_ms, why) < 0) return nullptr;
  } else if (t->connect_socket(settings.open_timeout_ms) < 0) {
    int e = errno;
    why = std::string(settings.through_daemon ? "cannot connect to pvhvd at " : "cannot connect to the relay socket ") +
          settings.socket_path + ": " + std::strerror(e);
    errno = e;
    return nullptr;
  } else if (settings.through_daemon && t->daemon_handshake(why) < 0) {
    return nullptr;
  }
  if (t->open_session(why) < 0) return nullptr;
  return t;
}

int RelayTransport::connect_socket(int timeout_ms) {
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  if (settings_.socket_path.size() >= sizeof(address.sun_path)) {
    errno = ENAMETOOLONG;
    return -1;
  }
  std::memcpy(address.sun_path, settings_.socket_path.c_str(), settings_.socket_path.size() + 1);
  uint64_t deadline = now_ms() + uint64_t(timeout_ms);
  for (;;) {
    fd_ = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd_ < 0) return -1;
    if (::connect(fd_, reinterpret_cast<sockaddr*>(&address), sizeof(address)) == 0) return 0;
    int e = errno;
    ::close(fd_);
    fd_ = -1;
    // QEMU may not be listening yet.
    if ((e != ENOENT && e != ECONNREFUSED) || now_ms() >= deadline) {
      errno = e;
      return -1;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
}

// pvhvd's client protocol (tools/PROTOCOL.md): one JSON line asking for the `relay` op, one line
// answering it; from there on the connection carries relay frames, forwarded by the daemon.
int RelayTransport::daemon_handshake(std::string& why) {
  static const char request[] = "{\"id\":1,\"op\":\"relay\"}\n";
  if (::send(fd_, request, sizeof(request) - 1, MSG_NOSIGNAL) != ssize_t(sizeof(request) - 1)) {
    why = std::string("cannot write to pvhvd: ") + std::strerror(errno);
    return -1;
  }
  std::string line;
  uint64_t deadline = now_ms() + uint64_t(settings_.open_timeout_ms);
  for (;;) {
    char c;
    pollfd p{fd_, POLLIN, 0};
    uint64_t now = now_ms();
    if (now >= deadline || ::poll(&p, 1, int(deadline - now)) <= 0) {
      why = "pvhvd did not answer the relay request";
      errno = ETIMEDOUT;
      return -1;
    }
    ssize_t n = ::recv(fd_, &c, 1, 0);  // byte by byte: what follows the line is frames
    if (n <= 0) {
      why = "pvhvd closed the connection";
      errno = ECONNRESET;
      return -1;
    }
    if (c == '\n') break;
    if (line.size() > 4096) break;
    line += c;
  }
  if (line.find("\"ok\":true") == std::string::npos) {
    why = "pvhvd refused the relay: " + line;
    errno = line.find("\"errno\":95") != std::string::npos ? ENOSYS : EPROTO;
    return -1;
  }
  return 0;
}

namespace {
namespace win = relay::window;
win::Header& window_header(uint8_t* window) { return *reinterpret_cast<win::Header*>(window); }

// While the window has nothing to read or no room: yield for a while first (dom0 answers a
// small request in a fraction of a millisecond), then sleep briefly, so a slow answer costs
// little CPU.
void window_pause(uint64_t waited_ms) {
  if (waited_ms < 2)
    std::this_thread::yield();
  else
    std::this_thread::sleep_for(std::chrono::microseconds(100));
}
}  // namespace

int RelayTransport::map_window(int timeout_ms, std::string& why) {
  int fd = ::open(settings_.window_path.c_str(), O_RDWR | O_CLOEXEC);
  if (fd < 0) {
    int e = errno;
    why = "cannot open PVHV_XENCTRL_WINDOW=" + settings_.window_path + ": " + std::strerror(e);
    errno = e;
    return -1;
  }
  void* map = ::mmap(nullptr, win::kBytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  int e = errno;
  ::close(fd);
  if (map == MAP_FAILED) {
    why = "cannot map PVHV_XENCTRL_WINDOW=" + settings_.window_path + ": " + std::strerror(e);
    errno = e;
    return -1;
  }
  window_ = static_cast<uint8_t*>(map);
  // dom0 announces the window once its relay polls it (the file may be older than this boot:
  // the test harness and the daemon create it empty before QEMU starts).
  win::Header& h = window_header(window_);
  uint64_t deadline = now_ms() + uint64_t(timeout_ms);
  while (!(win::load_acquire(h.state) == win::serving && h.magic == win::kMagic && h.version == win::kVersion &&
           h.ring_bytes == win::kRingBytes && h.to_dom0_offset == win::kToDom0Offset &&
           h.to_host_offset == win::kToHostOffset)) {
    if (now_ms() >= deadline) {
      why = "the relay announced no window in " + settings_.window_path + " (a machine without its ivshmem-plain?)";
      errno = ETIMEDOUT;
      return -1;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  win::ring_discard(h.to_host);  // what an earlier client left unread
  return 0;
}

int RelayTransport::window_send(const uint8_t* data, size_t length) {
  win::Header& h = window_header(window_);
  uint64_t start = now_ms(), deadline = start + uint64_t(settings_.request_timeout_ms);
  while (length > 0) {
    size_t n = win::ring_write(h.to_dom0, window_ + win::kToDom0Offset, win::kRingBytes, data, length);
    data += n;
    length -= n;
    if (n) continue;
    uint64_t now = now_ms();
    if (now >= deadline) {
      errno = ETIMEDOUT;  // dom0 reads nothing
      return -1;
    }
    window_pause(now - start);
  }
  return 0;
}

int RelayTransport::window_receive(uint8_t* buffer, size_t want, int wait_ms) {
  win::Header& h = window_header(window_);
  uint64_t start = now_ms();
  for (;;) {
    bool broken = false;
    size_t n = win::ring_read(h.to_host, window_ + win::kToHostOffset, win::kRingBytes, buffer, want, broken);
    if (broken && debugging()) std::fprintf(stderr, "xc (pvhv relay): the window's ring to the host is broken\n");
    if (n) {
      receiver_.push(buffer, n, now_ms());
      return 0;
    }
    uint64_t waited = now_ms() - start;
    if (waited >= uint64_t(wait_ms)) return 0;
    window_pause(waited);
  }
}

int RelayTransport::send_frame(uint8_t type, const std::vector<uint8_t>& payload) {
  std::vector<uint8_t> bytes(frame::kHeaderBytes);
  frame::encode_header(bytes.data(), type, 0, payload.data(), uint32_t(payload.size()));
  bytes.insert(bytes.end(), payload.begin(), payload.end());
  if (window_) return window_send(bytes.data(), bytes.size());
  size_t done = 0;
  while (done < bytes.size()) {
    ssize_t n = ::send(fd_, bytes.data() + done, bytes.size() - done, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return -1;
    done += size_t(n);
  }
  return 0;
}

// Sends OPEN until the relay answers (it may still be booting: what it missed was never read,
// what it has not read yet it answers in order, and only the answer to the last OPEN counts).
int RelayTransport::open_session(std::string& why) {
  uint32_t seq = uint32_t(::getpid()) << 12 ^ uint32_t(now_ms());
  uint64_t deadline = now_ms() + uint64_t(settings_.open_timeout_ms);
  for (;;) {
    ++seq;
    std::vector<uint8_t> payload;
    put32(payload, seq);
    put32(payload, relay::kProtocolVersion);
    if (send_frame(relay::open, payload) < 0) {
      why = std::string("cannot write to the relay socket: ") + std::strerror(errno);
      return -1;
    }
    Answer answer;
    uint64_t now = now_ms();
    int wait = now >= deadline ? 0 : int(std::min<uint64_t>(kOpenRetryMs, deadline - now));
    if (await(seq, wait, answer) == 0) {
      if (answer.type != relay::opened || answer.payload.size() < 24) {
        why = "the relay answered OPEN with something else";
        errno = EPROTO;
        return -1;
      }
      relay::Reader r(answer.payload.data(), answer.payload.size());
      uint32_t version = r.u32();
      r.u32();  // max request payload
      max_data_ = r.u32();
      r.u32();  // buffers
      r.u32();  // buffer pages
      trace_on_link_ = r.u32() & relay::kFlagTraceOnLink;
      if (version != relay::kProtocolVersion || max_data_ == 0) {
        why = "the relay speaks protocol version " + std::to_string(version);
        errno = EPROTONOSUPPORT;
        return -1;
      }
      next_seq_ = seq + 1;
      return 0;
    }
    if (errno != ETIMEDOUT || now_ms() >= deadline) {
      int e = errno;
      why = std::string("no session with the relay: ") + std::strerror(e);
      errno = e;
      return -1;
    }
  }
}

void RelayTransport::take(const relay::Received& f, uint32_t seq, bool& answered, Answer& answer, int& error) {
  if (f.type < 0x80) {  // the trace stream
    // The copy starts at the HELLO the relay sends when a session opens: what came before
    // belongs to a stream an earlier listener was reading.
    if (f.type == frame::hello) trace_started_ = true;
    if (f.type == frame::end) saw_trace_end_ = true;
    if (trace_ && trace_started_) {
      uint8_t header[frame::kHeaderBytes];
      frame::encode_header(header, f.type, f.channel, f.payload, f.length);
      std::fwrite(header, 1, sizeof(header), trace_);
      std::fwrite(f.payload, 1, f.length, trace_);
      std::fflush(trace_);
    }
    return;
  }
  relay::Reader r(f.payload, f.length);
  if (f.type == relay::event) {
    uint32_t port = r.u32();
    if (r.ok()) events_.push_back(port);
    return;
  }
  uint32_t answer_seq = r.u32();
  if (!r.ok()) return;
  if (f.type == relay::error) {
    uint32_t code = r.u32(), type = r.u32();
    int64_t detail = int64_t(r.u64());
    if (debugging())
      std::fprintf(stderr, "xc (pvhv relay): error %u for type 0x%x seq %u detail %lld\n", code, type, answer_seq,
                   (long long)detail);
    // A frame that reached the relay damaged (a stall of more than 500 ms inside it, as a host
    // starving QEMU can cause, or bad bytes) has no sequence number: with one request at a
    // time it was the one in flight, and the relay never ran it.
    if (answer_seq == relay::kNoSequence && (Error(code) == Error::truncated || Error(code) == Error::corrupt))
      request_damaged_ = true;
    if (answer_seq != seq) return;
    // Out of order: an earlier request was lost whole on the link (given up on by its timeout,
    // never run). The relay still waits for that number: this request can take it.
    if (Error(code) == Error::out_of_order && detail >= 0 && uint32_t(detail) != seq) {
      resync_seq_ = uint32_t(detail);
      request_damaged_ = true;
      return;
    }
    answered = true;
    error = errno_for(Error(code), detail);
    answer.type = f.type;  // kept whole for pvhv_xc_relay_forward
    answer.payload.assign(r.rest() - 16, r.rest() + r.remaining());
    return;
  }
  if (answer_seq != seq) return;  // a late answer to a request given up on
  answered = true;
  answer.type = f.type;
  answer.payload.assign(r.rest(), r.rest() + r.remaining());
}

int RelayTransport::await(uint32_t seq, int timeout_ms, Answer& answer) {
  uint64_t deadline = now_ms() + uint64_t(timeout_ms);
  uint8_t buffer[64 * 1024];
  for (;;) {
    bool answered = false;
    int error = 0;
    for (relay::Received r = receiver_.next(now_ms()); r.kind != relay::Received::Kind::nothing;
         r = receiver_.next(now_ms())) {
      if (r.kind == relay::Received::Kind::frame)
        take(r, seq, answered, answer, error);
      else if (debugging())
        std::fprintf(stderr, "xc (pvhv relay): bad bytes from the relay (error %u, detail %llu)\n", unsigned(r.error),
                     (unsigned long long)r.detail);
      if (answered) break;
    }
    if (answered) {
      if (error) {
        errno = error;
        return -1;
      }
      return 0;
    }
    uint64_t now = now_ms();
    if (request_damaged_) return kDamaged;
    if (now >= deadline) {
      errno = ETIMEDOUT;
      return -1;
    }
    size_t want = std::min(sizeof(buffer), receiver_.space());
    if (want == 0) continue;  // next() has a frame to hand out first
    int wait = int(std::min<uint64_t>(deadline - now, 100));
    if (window_) {
      if (window_receive(buffer, want, wait) < 0) return -1;
      continue;
    }
    pollfd p{fd_, POLLIN, 0};
    int ready = ::poll(&p, 1, wait);
    if (ready < 0 && errno != EINTR) return -1;
    if (ready <= 0) continue;
    ssize_t n = ::recv(fd_, buffer, want, 0);
    if (n == 0) {
      errno = ECONNRESET;  // QEMU went away: the machine ended
      return -1;
    }
    if (n < 0) {
      if (errno == EINTR || errno == EAGAIN) continue;
      return -1;
    }
    receiver_.push(buffer, size_t(n), now_ms());
  }
}

int RelayTransport::exchange(uint8_t type, const std::vector<uint8_t>& fields, uint8_t expected, Answer& answer) {
  struct Active {  // an event waiter leaves the link alone meanwhile
    std::atomic<int>& count;
    explicit Active(std::atomic<int>& c) : count(c) { ++count; }
    ~Active() { --count; }
  } active(requests_active_);
  std::lock_guard<std::mutex> lock(mutex_);
  if (dom0_stopped_) {  // nobody is left to answer (the machine may still be up: Xen halts it)
    errno = ESHUTDOWN;
    return -1;
  }
  if (down_errno_) {  // the owner reconnects (reopen): try again then
    errno = EAGAIN;
    return -1;
  }
  constexpr int kSends = 4;  // the first and three more after damage on the link
  int rc = kDamaged;
  for (int send = 0; send < kSends && rc == kDamaged; ++send) {
    if (resync_seq_) {
      next_seq_ = *resync_seq_;
      resync_seq_.reset();
    }
    uint32_t seq = next_seq_;  // a damaged request is sent again with its own number
    std::vector<uint8_t> payload;
    put32(payload, seq);
    payload.insert(payload.end(), fields.begin(), fields.end());
    request_damaged_ = false;
    if (send > 0 && debugging())
      std::fprintf(stderr, "xc (pvhv relay): request %u damaged on the link: sent again\n", seq);
    if (send_frame(type, payload) < 0) {
      mark_down(errno == EPIPE ? ECONNRESET : errno);
      return -1;
    }
    rc = await(seq, settings_.request_timeout_ms, answer);
    if (rc != kDamaged) next_seq_ = seq + 1;  // answered or given up on: its number is used up
  }
  if (rc == kDamaged) errno = EPROTO;
  // The link itself failed (not the relay's error answer, which has a type): for an owner that
  // keeps it across drops, dom0 silent for the whole request timeout is a drop too.
  if (rc < 0 && answer.type == 0 && errno != EPROTO) mark_down(errno);
  if (rc < 0) return -1;
  if (answer.type != expected) {
    errno = EPROTO;
    return -1;
  }
  return 0;
}

int RelayTransport::hypercall(uint32_t number, const uint64_t (&args)[5], int64_t& result) {
  std::vector<uint8_t> f;
  put32(f, number);
  for (uint64_t a : args) put64(f, a);
  Answer answer;
  if (exchange(relay::hypercall, f, relay::result, answer) < 0) return -1;
  relay::Reader r(answer.payload.data(), answer.payload.size());
  result = int64_t(r.u64());
  if (!r.done()) {
    errno = EPROTO;
    return -1;
  }
  return 0;
}

int RelayTransport::buffer_alloc(uint32_t pages, uint64_t& address) {
  std::vector<uint8_t> f;
  put32(f, pages);
  Answer answer;
  if (exchange(relay::buffer_alloc, f, relay::buffer, answer) < 0) {
    // Too large or no room left in dom0's buffer window: to the caller, memory it cannot have.
    if (errno == EINVAL || errno == ENOSPC) errno = ENOMEM;
    return -1;
  }
  relay::Reader r(answer.payload.data(), answer.payload.size());
  uint32_t got = r.u32();
  address = r.u64();
  if (!r.done() || got != pages) {
    errno = EPROTO;
    return -1;
  }
  return 0;
}

int RelayTransport::buffer_free(uint64_t address) {
  std::vector<uint8_t> f;
  put64(f, address);
  Answer answer;
  return exchange(relay::buffer_free, f, relay::ok, answer);
}

int RelayTransport::buffer_write(uint64_t address, const void* data, size_t length) {
  const auto* bytes = static_cast<const uint8_t*>(data);
  for (size_t done = 0; done < length || (length == 0 && done == 0);) {
    size_t piece = std::min<size_t>(length - done, max_data_);
    std::vector<uint8_t> f;
    put64(f, address + done);
    f.insert(f.end(), bytes + done, bytes + done + piece);
    Answer answer;
    if (exchange(relay::buffer_write, f, relay::ok, answer) < 0) return -1;
    done += piece;
    if (length == 0) break;
  }
  return 0;
}

int RelayTransport::buffer_read(uint64_t address, void* data, size_t length) {
  auto* bytes = static_cast<uint8_t*>(data);
  for (size_t done = 0; done < length;) {
    size_t piece = std::min<size_t>(length - done, max_data_);
    std::vector<uint8_t> f;
    put64(f, address + done);
    put32(f, piece);
    if (data_request(relay::buffer_read, f, bytes + done, piece) < 0) return -1;
    done += piece;
  }
  return 0;
}

int RelayTransport::foreign_read(uint32_t domid, uint64_t frame, uint32_t offset, void* out, size_t length) {
  if (length > relay::kPageBytes) {
    errno = EINVAL;
    return -1;
  }
  std::vector<uint8_t> f;
  put32(f, domid);
  put64(f, frame);
  put32(f, offset);
  put32(f, length);
  return data_request(relay::foreign_read, f, out, length);
}

int RelayTransport::data_request(uint8_t type, const std::vector<uint8_t>& fields, void* out, size_t length) {
  Answer answer;
  if (exchange(type, fields, relay::data, answer) < 0) return -1;
  if (answer.payload.size() != length) {
    errno = EPROTO;
    return -1;
  }
  std::memcpy(out, answer.payload.data(), length);
  return 0;
}

int RelayTransport::foreign_write(uint32_t domid, uint64_t frame, uint32_t offset, const void* data, size_t length) {
  std::vector<uint8_t> f;
  put32(f, domid);
  put64(f, frame);
  put32(f, offset);
  return data_write(relay::foreign_write, std::move(f), data, length);
}

int RelayTransport::foreign_map(uint32_t domid, uint64_t frame, uint32_t& handle) {
  std::vector<uint8_t> f;
  put32(f, domid);
  put64(f, frame);
  return u32_request(relay::foreign_map, f, relay::mapping, handle);
}

int RelayTransport::foreign_unmap(uint32_t handle) {
  std::vector<uint8_t> f;
  put32(f, handle);
  Answer answer;
  return exchange(relay::foreign_unmap, f, relay::ok, answer);
}

int RelayTransport::mapped_read(uint32_t handle, uint32_t offset, void* out, size_t length) {
  if (length > relay::kPageBytes) {
    errno = EINVAL;
    return -1;
  }
  std::vector<uint8_t> f;
  put32(f, handle);
  put32(f, offset);
  put32(f, length);
  return data_request(relay::mapped_read, f, out, length);
}

int RelayTransport::mapped_write(uint32_t handle, uint32_t offset, const void* data, size_t length) {
  std::vector<uint8_t> f;
  put32(f, handle);
  put32(f, offset);
  return data_write(relay::mapped_write, std::move(f), data, length);
}

int RelayTransport::data_write(uint8_t type, std::vector<uint8_t> fields, const void* data, size_t length) {
  if (length > relay::kPageBytes) {
    errno = EINVAL;
    return -1;
  }
  const auto* bytes = static_cast<const uint8_t*>(data);
  fields.insert(fields.end(), bytes, bytes + length);
  Answer answer;
  return exchange(type, fields, relay::ok, answer);
}

int RelayTransport::u32_request(uint8_t type, const std::vector<uint8_t>& fields, uint8_t answer_type,
                                uint32_t& value) {
  Answer answer;
  if (exchange(type, fields, answer_type, answer) < 0) return -1;
  relay::Reader r(answer.payload.data(), answer.payload.size());
  value = r.u32();
  if (!r.done()) {
    errno = EPROTO;
    return -1;
  }
  return 0;
}

int RelayTransport::evtchn_bind_interdomain(uint32_t remote_domid, uint32_t remote_port, uint32_t& local_port) {
  std::vector<uint8_t> f;
  put32(f, remote_domid);
  put32(f, remote_port);
  return u32_request(relay::evtchn_bind_interdomain, f, relay::port, local_port);
}

int RelayTransport::port_request(uint8_t type, uint32_t port) {
  std::vector<uint8_t> f;
  put32(f, port);
  Answer answer;
  return exchange(type, f, relay::ok, answer);
}

int RelayTransport::evtchn_notify(uint32_t port) { return port_request(relay::evtchn_notify, port); }
int RelayTransport::evtchn_unmask(uint32_t port) { return port_request(relay::evtchn_unmask, port); }
int RelayTransport::evtchn_close(uint32_t port) {
  int rc = port_request(relay::evtchn_close, port);
  // The number may be bound again: its old events are not the new binding's.
  std::lock_guard<std::mutex> lock(mutex_);
  events_.erase(std::remove(events_.begin(), events_.end(), port), events_.end());
  return rc;
}

int RelayTransport::evtchn_bind_virq(uint32_t virq, uint32_t& local_port) {
  std::vector<uint8_t> f;
  put32(f, virq);
  return u32_request(relay::evtchn_bind_virq, f, relay::port, local_port);
}

int RelayTransport::forward(uint8_t type, const std::vector<uint8_t>& fields, uint8_t& answer_type,
                            std::vector<uint8_t>& answer_fields) {
  if (!relay::is_request(type) || type == relay::open || type == relay::shutdown) {
    errno = EINVAL;  // the session and dom0's life are the link owner's
    return -1;
  }
  Answer answer;
  // Any answer type is the caller's to judge: `expected` none, so the check below always fails
  // for a good answer and is undone here.
  int rc = exchange(type, fields, 0, answer);
  if (rc < 0 && answer.type == 0) return -1;  // no answer at all (the link, a timeout)
  answer_type = answer.type;
  answer_fields = std::move(answer.payload);
  return 0;
}

bool RelayTransport::take_event(const std::vector<uint32_t>& ports, uint32_t& port) {
  for (auto it = events_.begin(); it != events_.end(); ++it) {
    if (!ports.empty() && std::find(ports.begin(), ports.end(), *it) == ports.end()) continue;
    port = *it;
    events_.erase(it);
    return true;
  }
  return false;
}

// The relay pushes EVENT frames whenever they come; they are read while a request waits for its
// answer, and here, in short turns holding the link while no request is in flight or waiting
// (a request never waits for a waiter: it reads the events itself), between pauses that cost
// no CPU (the window path has no descriptor to sleep on). An event waits at most a pause.
int RelayTransport::evtchn_wait(const std::vector<uint32_t>& ports, int timeout_ms, uint32_t& port) {
  constexpr uint64_t kTurnMs = 2, kPauseMs = 48;
  uint64_t deadline = timeout_ms < 0 ? UINT64_MAX : now_ms() + uint64_t(timeout_ms);
  for (;;) {
    std::unique_lock<std::mutex> lock(mutex_, std::try_to_lock);
    if (lock.owns_lock()) {
      if (take_event(ports, port)) return 0;
      if (dom0_stopped_) {
        errno = ESHUTDOWN;
        return -1;
      }
      uint64_t now = now_ms();
      if (requests_active_.load() == 0 && now < deadline) {
        Answer none;
        // A number no answer carries: await only reads, and returns at the end of the turn.
        uint32_t nobody = next_seq_ + 0x80000000u;
        if (down_errno_) {
          errno = EAGAIN;
          return -1;
        }
        int rc = await(nobody, int(std::min(deadline - now, kTurnMs)), none);
        request_damaged_ = false;  // no request of ours was in flight
        if (rc == -1 && errno != ETIMEDOUT) {
          mark_down(errno);
          return -1;
        }
        if (take_event(ports, port)) return 0;
      }
      lock.unlock();
    }
    uint64_t now = now_ms();
    if (now >= deadline) {
      errno = ETIMEDOUT;
      return -1;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(std::min(deadline - now, kPauseMs)));
  }
}

void RelayTransport::mark_down(int error) {
  if (!keep_across_drops_ || down_errno_) return;
  int saved = errno;
  if (fd_ >= 0) ::close(fd_);  // QEMU takes the next connection: reopen's
  fd_ = -1;
  down_errno_ = error ? error : ECONNRESET;
  errno = saved;
}

// The same steps as open(), on the same handle: a new connection (or the window announced
// again), a fresh receiver and event queue, OPEN. What the old session held in dom0 (buffers,
// ports) the relay freed at this OPEN; generation() tells the library's buffer cache so.
int RelayTransport::reopen(int timeout_ms, std::string& why) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
  down_errno_ = down_errno_ ? down_errno_.load() : ECONNRESET;  // down until the session opens
  receiver_ = relay::FrameReceiver(storage_.data(), storage_.size(), kHostMaxPayload, kStallMs);
  events_.clear();
  request_damaged_ = false;
  resync_seq_.reset();
  trace_started_ = saw_trace_end_ = false;
  int saved_open_timeout = settings_.open_timeout_ms;
  settings_.open_timeout_ms = timeout_ms;
  int rc = 0;
  if (window_) {
    ::munmap(window_, relay::window::kBytes);
    window_ = nullptr;
    rc = map_window(timeout_ms, why);
  } else if (connect_socket(timeout_ms) < 0) {
    why = "cannot connect to the relay socket " + settings_.socket_path + ": " + std::strerror(errno);
    rc = -1;
  } else if (settings_.through_daemon) {
    rc = daemon_handshake(why);
  }
  if (rc == 0) rc = open_session(why);
  settings_.open_timeout_ms = saved_open_timeout;
  int saved = errno;
  if (rc < 0) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
    errno = saved;
    return -1;
  }
  ++generation_;
  down_errno_ = 0;
  return 0;
}

int RelayTransport::dom0_shutdown(uint32_t reason) {
  std::vector<uint8_t> f;
  put32(f, reason);
  Answer answer;
  if (exchange(relay::shutdown, f, relay::ok, answer) < 0) return -1;
  dom0_stopped_ = true;
  // dom0 ends the trace stream after answering: read it to its END, so PVHV_XENCTRL_TRACE holds
  // all of it (until QEMU closes the socket, or for the request timeout at most).
  if (trace_ && trace_on_link_) {
    uint64_t deadline = now_ms() + uint64_t(settings_.request_timeout_ms);
    Answer none;
    while (!saw_trace_end_ && now_ms() < deadline)
      if (await(next_seq_, 200, none) < 0 && errno != ETIMEDOUT) break;
  }
  return 0;
}

namespace {
int environment_ms(const char* name, int fallback) {
  const char* v = std::getenv(name);
  if (!v || !*v) return fallback;
  char* end = nullptr;
  long ms = std::strtol(v, &end, 10);
  return (end && *end == 0 && ms > 0 && ms < 24 * 3600 * 1000) ? int(ms) : fallback;
}
}  // namespace

namespace {
std::shared_ptr<Transport> open_new_transport(const std::string& s, std::string& why) {
  if (s.rfind("relay:", 0) == 0 && s.size() > 6) {
    RelaySettings settings;
    settings.socket_path = s.substr(6);
    settings.request_timeout_ms = environment_ms("PVHV_XENCTRL_TIMEOUT_MS", settings.request_timeout_ms);
    settings.open_timeout_ms = environment_ms("PVHV_XENCTRL_OPEN_TIMEOUT_MS", settings.open_timeout_ms);
    if (const char* trace = std::getenv("PVHV_XENCTRL_TRACE")) settings.trace_path = trace;
    if (const char* window = std::getenv("PVHV_XENCTRL_WINDOW")) settings.window_path = window;
    return RelayTransport::open(settings, why);
  }
  if (s.rfind("daemon:", 0) == 0 && s.size() > 7) {
    RelaySettings settings;
    settings.socket_path = s.substr(7);
    settings.through_daemon = true;
    settings.request_timeout_ms = environment_ms("PVHV_XENCTRL_TIMEOUT_MS", settings.request_timeout_ms);
    settings.open_timeout_ms = environment_ms("PVHV_XENCTRL_OPEN_TIMEOUT_MS", 5000);
    return RelayTransport::open(settings, why);
  }
  if (s == "privcmd") {
    why = "PVHV_XENCTRL=" + s + ": not implemented (relay:<socket path> and daemon:<socket path> are)";
    errno = ENOSYS;
    return nullptr;
  }
  why = "PVHV_XENCTRL=" + s + ": unknown transport (relay:<socket path>, daemon:<socket path>)";
  errno = EINVAL;
  return nullptr;
}
}  // namespace

std::shared_ptr<Transport> open_transport_from_environment(std::string& why) {
  const char* spec = std::getenv("PVHV_XENCTRL");
  if (!spec || !*spec) {
    why = "PVHV_XENCTRL is not set (relay:<socket path>, see tools/README.md)";
    errno = ENOENT;
    return nullptr;
  }
  // The session of a handle still open on the same link (and window), else a new one.
  std::string key = std::string(spec) + "\n" + (std::getenv("PVHV_XENCTRL_WINDOW") ?: "");
  static std::mutex open_mutex;
  static std::map<std::string, std::weak_ptr<Transport>> open_links;
  std::lock_guard<std::mutex> lock(open_mutex);
  if (auto existing = open_links[key].lock()) return existing;
  auto transport = open_new_transport(spec, why);
  if (transport) open_links[key] = transport;
  return transport;
}

}  // namespace pvhv::xc
