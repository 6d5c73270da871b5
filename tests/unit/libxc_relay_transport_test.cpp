// The library's relay transport (tools/libxc/relay_transport.h) against the relay's own request
// handling (guest/relay/server/relay_server.h) with a fake dom0, over a real Unix socket: sessions,
// pieces of large transfers, relay errors turned into errno as tools/README.md says, timeouts.
#include <gtest/gtest.h>

#include <fcntl.h>
#include <poll.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "relay/server/relay_server.h"
#include "tools/libxc/relay_transport.h"
#include "common/relay/frame_receiver.h"
#include "common/relay/window.h"

namespace {
namespace proto = ::relay;
using pvhv::xc::RelaySettings;
using pvhv::xc::RelayTransport;

constexpr uint64_t kWindow = 0xffffffffb4000000ull;

// dom0 as far as the server can tell: memory for buffers, a hypercall that answers by number.
struct FakeDom0 final : lib::relay::Backend {
  std::map<uint64_t, std::vector<uint8_t>> buffers;
  std::atomic<int> shutdowns{0};  // the server thread counts, the test reads
  long hypercall(uint32_t number, const uint64_t (&a)[5]) override {
    if (number == 17) return 0x40011;  // xen_version
    if (number == 35) return -38;      // sysctl: -ENOSYS
    return a[0];
  }
  uint8_t* map_buffer(uint64_t address, uint32_t pages) override {
    auto& b = buffers[address];
    b.assign(pages * 4096, 0);
    return b.data();
  }
  void unmap_buffer(uint64_t address, uint32_t) override { buffers.erase(address); }
  long foreign_copy(uint16_t, uint64_t frame, uint32_t, uint8_t* data, uint32_t length, bool) override {
    if (frame == 0) return -3;  // -ESRCH
    std::memset(data, 0x42, length);
    return 0;
  }
  // Lasting mappings: frame 0 is the hypervisor's -ESRCH, the rest a page of their own.
  std::map<uint32_t, std::vector<uint8_t>> mapped;
  long map_foreign(uint32_t slot, uint16_t, uint64_t frame) override {
    if (frame == 0) return -3;
    mapped[slot].assign(4096, uint8_t(frame));
    return 0;
  }
  void unmap_foreign(uint32_t slot) override { mapped.erase(slot); }
  uint8_t* mapped_page(uint32_t slot) override { return mapped.at(slot).data(); }
  // Xen's EVTCHNOP_bind_virq: -EINVAL beyond NR_VIRQS (24), -EEXIST for a VIRQ bound already.
  std::map<uint32_t, uint32_t> virqs;  // virq -> port
  long bind_virq(uint32_t virq, uint32_t& port) override {
    if (virq >= 24) return -22;
    if (virqs.count(virq)) return -17;
    port = 7 + uint32_t(virqs.size());
    virqs[virq] = port;
    return 0;
  }
  long bind_interdomain(uint16_t, uint32_t, uint32_t&) override { return -22; }
  long notify(uint32_t) override { return 0; }
  long unmask(uint32_t) override { return 0; }
  long close(uint32_t port) override {
    for (auto it = virqs.begin(); it != virqs.end(); ++it)
      if (it->second == port) {
        virqs.erase(it);
        break;
      }
    return 0;
  }
  void session_opened() override {}
  void shutdown(uint32_t) override { ++shutdowns; }
};

// A relay on the host: the pure server behind a listening socket, one client at a time.
class FakeRelay : lib::relay::Sink {
 public:
  FakeRelay() {
    char dir[] = "/tmp/relaytestXXXXXX";
    path_ = std::string(mkdtemp(dir)) + "/sock";
    listener_ = ::socket(AF_UNIX, SOCK_STREAM, 0);
    sockaddr_un a{};
    a.sun_family = AF_UNIX;
    std::strcpy(a.sun_path, path_.c_str());
    EXPECT_EQ(::bind(listener_, reinterpret_cast<sockaddr*>(&a), sizeof(a)), 0);
    EXPECT_EQ(::listen(listener_, 1), 0);
    thread_ = std::thread([this] { serve(); });
  }
  ~FakeRelay() {
    stop_ = true;
    thread_.join();
    ::close(listener_);
    ::unlink(path_.c_str());
  }
  const std::string& path() const { return path_; }
  std::atomic<bool> silent{false};  // stops answering (a hung dom0)
  std::atomic<int> damage{0};       // this many frames arrive truncated (as after a stall)
  std::atomic<int> lose{0};         // this many frames are lost whole (never reach the relay)
  std::atomic<int> handled{0};
  std::atomic<int> raise{-1};        // a port an event arrives on (the server thread delivers it)
  std::atomic<bool> hang_up{false};  // the connection closed (then the next one is taken)
  std::atomic<int> connections{0};
  FakeDom0 dom0;

 private:
  void send(uint8_t type, uint16_t channel, const uint8_t* payload, uint32_t length) override {
    std::vector<uint8_t> out(proto::frame::kHeaderBytes);
    proto::frame::encode_header(out.data(), type, channel, payload, length);
    out.insert(out.end(), payload, payload + length);
    ::send(client_, out.data(), out.size(), MSG_NOSIGNAL);
  }
  void serve() {
    while (!stop_) serve_one();
  }
  // One connection (QEMU's chardev serves one at a time, and takes the next after it closes).
  void serve_one() {
    std::vector<uint8_t> storage(proto::frame::kHeaderBytes + proto::kMaxRequestPayload);
    proto::FrameReceiver receiver(storage.data(), storage.size(), proto::kMaxRequestPayload, 1000);
    lib::relay::Server server(dom0, *this, kWindow, 0);
    pollfd p{listener_, POLLIN, 0};
    while (!stop_ && ::poll(&p, 1, 50) <= 0) {
    }
    if (stop_) return;
    client_ = ::accept(listener_, nullptr, nullptr);
    ++connections;
    uint8_t chunk[4096];
    while (!stop_) {
      if (hang_up.exchange(false)) break;
      if (int port = raise.exchange(-1); port >= 0) server.handle_event(uint32_t(port));
      pollfd c{client_, POLLIN, 0};
      if (::poll(&c, 1, 5) <= 0) continue;
      ssize_t n = ::recv(client_, chunk, std::min(sizeof(chunk), receiver.space()), 0);
      if (n <= 0) break;
      receiver.push(chunk, size_t(n), 0);
      for (proto::Received r = receiver.next(0); r.kind != proto::Received::Kind::nothing; r = receiver.next(0))
        if (r.kind == proto::Received::Kind::frame && !silent) {
          if (damage > 0) {
            --damage;
            server.handle_receive_error(proto::Error::truncated, r.type, r.channel, r.length / 2);
          } else if (lose > 0) {
            --lose;
          } else {
            ++handled;
            server.handle_frame(r.type, r.channel, r.payload, r.length);
          }
        }
    }
    ::close(client_);
  }
  std::string path_;
  int listener_ = -1, client_ = -1;
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

std::unique_ptr<RelayTransport> connect(FakeRelay& relay, int timeout_ms = 5000) {
  RelaySettings s;
  s.socket_path = relay.path();
  s.request_timeout_ms = timeout_ms;
  s.open_timeout_ms = 5000;
  std::string why;
  auto t = RelayTransport::open(s, why);
  EXPECT_TRUE(t) << why;
  return t;
}

TEST(LibxcRelayTransport, HypercallsAndTheirResults) {
  FakeRelay relay;
  auto t = connect(relay);
  int64_t result = 0;
  const uint64_t none[5] = {};
  ASSERT_EQ(t->hypercall(17, none, result), 0);
  EXPECT_EQ(result, 0x40011);
  ASSERT_EQ(t->hypercall(35, none, result), 0);  // the hypervisor's error is a result
  EXPECT_EQ(result, -38);
  errno = 0;
  EXPECT_EQ(t->hypercall(0, none, result), -1);  // set_trap_table: refused by the relay
  EXPECT_EQ(errno, EPERM);
}

TEST(LibxcRelayTransport, LargeTransfersGoInPieces) {
  FakeRelay relay;
  auto t = connect(relay);
  uint64_t address = 0;
  ASSERT_EQ(t->buffer_alloc(40, address), 0);
  EXPECT_EQ(address, kWindow);
  std::vector<uint8_t> data(40 * 4096);
  for (size_t i = 0; i < data.size(); ++i) data[i] = uint8_t(i * 31 + 7);
  ASSERT_EQ(t->buffer_write(address, data.data(), data.size()), 0);  // five frames' worth
  std::vector<uint8_t> back(data.size());
  ASSERT_EQ(t->buffer_read(address, back.data(), back.size()), 0);
  EXPECT_EQ(back, data);
  EXPECT_EQ(t->buffer_free(address), 0);
}

TEST(LibxcRelayTransport, RelayErrorsBecomeErrno) {
  FakeRelay relay;
  auto t = connect(relay);
  uint8_t byte = 0;
  errno = 0;
  EXPECT_EQ(t->buffer_write(kWindow + 4096, &byte, 1), -1);
  EXPECT_EQ(errno, EFAULT);  // no such buffer
  errno = 0;
  EXPECT_EQ(t->buffer_free(kWindow), -1);
  EXPECT_EQ(errno, EFAULT);
  uint64_t address;
  errno = 0;
  EXPECT_EQ(t->buffer_alloc(5000, address), -1);
  EXPECT_EQ(errno, ENOMEM);  // more than the window
  errno = 0;
  EXPECT_EQ(t->foreign_read(0x7ff1, 1, 0, &byte, 1), -1);
  EXPECT_EQ(errno, EPERM);  // DOMID_IO
  errno = 0;
  EXPECT_EQ(t->foreign_read(1, 0, 0, &byte, 1), -1);
  EXPECT_EQ(errno, ESRCH);  // the hypervisor's -ESRCH
  errno = 0;
  EXPECT_EQ(t->foreign_read(1, 1, 4000, &byte, 100), -1);
  EXPECT_EQ(errno, EINVAL);
  std::vector<uint8_t> page(4096);
  EXPECT_EQ(t->foreign_read(1, 1, 0, page.data(), page.size()), 0);
  EXPECT_EQ(page[4095], 0x42);
}

TEST(LibxcRelayTransport, LastingMappings) {
  FakeRelay relay;
  auto t = connect(relay);
  uint32_t handle = 0;
  ASSERT_EQ(t->foreign_map(3, 0x21, handle), 0);
  uint8_t bytes[2] = {};
  ASSERT_EQ(t->mapped_read(handle, 4094, bytes, 2), 0);
  EXPECT_EQ(bytes[1], 0x21);
  const uint8_t value[3] = {1, 2, 3};
  ASSERT_EQ(t->mapped_write(handle, 0, value, 3), 0);
  ASSERT_EQ(t->mapped_read(handle, 1, bytes, 2), 0);
  EXPECT_EQ(bytes[0], 2);
  EXPECT_EQ(bytes[1], 3);
  errno = 0;
  EXPECT_EQ(t->mapped_read(handle, 4000, bytes, 2), 0);
  std::vector<uint8_t> big(4097);
  EXPECT_EQ(t->mapped_read(handle, 0, big.data(), big.size()), -1);
  EXPECT_EQ(errno, EINVAL);
  errno = 0;
  EXPECT_EQ(t->mapped_write(handle, 4095, value, 3), -1);
  EXPECT_EQ(errno, EINVAL);  // past the frame: the relay's bad_range
  ASSERT_EQ(t->foreign_unmap(handle), 0);
  errno = 0;
  EXPECT_EQ(t->mapped_read(handle, 0, bytes, 1), -1);
  EXPECT_EQ(errno, EBADF);  // no such mapping any more
  errno = 0;
  EXPECT_EQ(t->foreign_unmap(handle), -1);
  EXPECT_EQ(errno, EBADF);
  errno = 0;
  EXPECT_EQ(t->foreign_map(0, 5, handle), -1);
  EXPECT_EQ(errno, EPERM);  // dom0's own frame: the relay's policy
  errno = 0;
  EXPECT_EQ(t->foreign_map(0x7ff2, 5, handle), -1);
  EXPECT_EQ(errno, EPERM);  // DOMID_XEN
  errno = 0;
  EXPECT_EQ(t->foreign_map(4, 0, handle), -1);
  EXPECT_EQ(errno, ESRCH);  // the hypervisor's refusal
  for (uint32_t i = 0; i < 8; ++i) ASSERT_EQ(t->foreign_map(5, 1 + i, handle), 0);
  errno = 0;
  EXPECT_EQ(t->foreign_map(5, 9, handle), -1);
  EXPECT_EQ(errno, ENOSPC);  // eight of one domain at most
}

TEST(LibxcRelayTransport, AHungRelayTimesOut) {
  FakeRelay relay;
  auto t = connect(relay, 300);
  relay.silent = true;
  int64_t result;
  const uint64_t none[5] = {};
  errno = 0;
  EXPECT_EQ(t->hypercall(17, none, result), -1);
  EXPECT_EQ(errno, ETIMEDOUT);
}

// A request the relay received damaged (its ERROR has no sequence number) was never run: the
// library sends it again under the same number, and the call succeeds.
TEST(LibxcRelayTransport, ADamagedRequestIsSentAgain) {
  FakeRelay relay;
  auto t = connect(relay);
  int before = relay.handled;
  relay.damage = 2;
  int64_t result = 0;
  const uint64_t none[5] = {};
  ASSERT_EQ(t->hypercall(17, none, result), 0);
  EXPECT_EQ(result, 0x40011);
  EXPECT_EQ(relay.handled - before, 1);
  relay.damage = 10;  // damaged every time: given up after four sends
  errno = 0;
  EXPECT_EQ(t->hypercall(17, none, result), -1);
  EXPECT_EQ(errno, EPROTO);
  relay.damage = 0;
  ASSERT_EQ(t->hypercall(17, none, result), 0);
}

// A request lost whole times out; the relay still waits for its number, and the next request
// takes that number (out_of_order tells it) instead of failing for ever after.
TEST(LibxcRelayTransport, ALostRequestDoesNotWedgeTheSession) {
  FakeRelay relay;
  auto t = connect(relay, 300);
  relay.lose = 1;
  int64_t result = 0;
  const uint64_t none[5] = {};
  errno = 0;
  EXPECT_EQ(t->hypercall(17, none, result), -1);
  EXPECT_EQ(errno, ETIMEDOUT);
  ASSERT_EQ(t->hypercall(17, none, result), 0);
  EXPECT_EQ(result, 0x40011);
  ASSERT_EQ(t->hypercall(17, none, result), 0);
}

TEST(LibxcRelayTransport, EventChannelsForTheHost) {
  FakeRelay relay;
  auto t = connect(relay);
  uint32_t port = 0;
  errno = 0;
  EXPECT_EQ(t->evtchn_bind_interdomain(1, 3, port), -1);
  EXPECT_EQ(errno, EINVAL);  // the hypervisor's -EINVAL, as the relay reports it
  errno = 0;
  EXPECT_EQ(t->evtchn_notify(5), -1);
  EXPECT_EQ(errno, EINVAL);  // no_port: not a port the host bound
  errno = 0;
  EXPECT_EQ(t->evtchn_close(5), -1);
  EXPECT_EQ(errno, EINVAL);
}

// EVTCHNOP_bind_virq for the host: Xen's errors, the event pushed and taken by evtchn_wait,
// events on other ports left queued for their owners, a wait that times out.
TEST(LibxcRelayTransport, VirqsForTheHost) {
  FakeRelay relay;
  auto t = connect(relay);
  uint32_t port = 0, got = 0;
  errno = 0;
  EXPECT_EQ(t->evtchn_bind_virq(24, port), -1);
  EXPECT_EQ(errno, EINVAL);
  errno = 0;
  EXPECT_EQ(t->evtchn_bind_virq(0xffffffffu, port), -1);
  EXPECT_EQ(errno, EINVAL);
  ASSERT_EQ(t->evtchn_bind_virq(3, port), 0);  // VIRQ_DOM_EXC
  uint32_t again = 0;
  errno = 0;
  EXPECT_EQ(t->evtchn_bind_virq(3, again), -1);
  EXPECT_EQ(errno, EEXIST);
  errno = 0;
  EXPECT_EQ(t->evtchn_wait({}, 50, got), -1);
  EXPECT_EQ(errno, ETIMEDOUT);
  relay.raise = int(port);
  ASSERT_EQ(t->evtchn_wait({}, 5000, got), 0);
  EXPECT_EQ(got, port);
  // An event on a port the waiter does not ask for stays for the one who does.
  uint32_t other = 0;
  ASSERT_EQ(t->evtchn_bind_virq(4, other), 0);
  relay.raise = int(other);
  errno = 0;
  EXPECT_EQ(t->evtchn_wait({port}, 200, got), -1);
  EXPECT_EQ(errno, ETIMEDOUT);
  ASSERT_EQ(t->evtchn_wait({other}, 0, got), 0);
  EXPECT_EQ(got, other);
  // Requests made while another thread waits are answered (the waiter steps aside).
  std::thread waiter([&] {
    uint32_t p = 0;
    EXPECT_EQ(t->evtchn_wait({port}, 3000, p), 0);
    EXPECT_EQ(p, port);
  });
  auto start = std::chrono::steady_clock::now();
  int64_t result = 0;
  const uint64_t args[5] = {};
  for (int i = 0; i < 20; ++i) ASSERT_EQ(t->hypercall(17, args, result), 0);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(2));
  relay.raise = int(port);
  waiter.join();
  // Closed: the VIRQ may be bound again; the old port is no longer the host's.
  ASSERT_EQ(t->evtchn_close(port), 0);
  errno = 0;
  EXPECT_EQ(t->evtchn_unmask(port), -1);
  EXPECT_EQ(errno, EINVAL);
  EXPECT_EQ(t->evtchn_bind_virq(3, again), 0);
}

TEST(LibxcRelayTransport, NothingAfterShutdown) {
  FakeRelay relay;
  auto t = connect(relay);
  ASSERT_EQ(t->dom0_shutdown(0), 0);
  // The relay shuts down after its answer went out: the count may land just after the call returns.
  for (int i = 0; i < 200 && relay.dom0.shutdowns == 0; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  EXPECT_EQ(relay.dom0.shutdowns, 1);
  int64_t result;
  const uint64_t none[5] = {};
  errno = 0;
  EXPECT_EQ(t->hypercall(17, none, result), -1);
  EXPECT_EQ(errno, ESHUTDOWN);
}

TEST(LibxcRelayTransport, NoRelayListening) {
  RelaySettings s;
  s.socket_path = "/tmp/no-such-relay-socket";
  s.open_timeout_ms = 300;
  std::string why;
  errno = 0;
  EXPECT_FALSE(RelayTransport::open(s, why));
  EXPECT_EQ(errno, ENOENT);
  EXPECT_NE(why.find("/tmp/no-such-relay-socket"), std::string::npos);
}
}  // namespace

namespace {
namespace win = relay::window;

// dom0's side of the bulk window on the host: a file as QEMU's memory-backend-file, the pure
// server reading the ring to dom0 and answering on the ring to the host.
class FakeWindowRelay : lib::relay::Sink {
 public:
  explicit FakeWindowRelay(bool announce = true) {
    char dir[] = "/tmp/relaywinXXXXXX";
    path_ = std::string(mkdtemp(dir)) + "/window";
    int fd = ::open(path_.c_str(), O_RDWR | O_CREAT, 0600);
    EXPECT_EQ(::ftruncate(fd, off_t(win::kBytes)), 0);
    base_ = static_cast<uint8_t*>(::mmap(nullptr, win::kBytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0));
    ::close(fd);
    header().magic = win::kMagic;
    header().version = win::kVersion;
    header().ring_bytes = win::kRingBytes;
    header().to_dom0_offset = win::kToDom0Offset;
    header().to_host_offset = win::kToHostOffset;
    // What an earlier client never read: a new one must not take it for its answers.
    std::vector<uint8_t> stale(100, 0x55);
    win::ring_write(header().to_host, base_ + win::kToHostOffset, win::kRingBytes, stale.data(), stale.size());
    if (announce) win::store_release(header().state, win::serving);
    thread_ = std::thread([this] { serve(); });
  }
  ~FakeWindowRelay() {
    stop_ = true;
    thread_.join();
    ::munmap(base_, win::kBytes);
    ::unlink(path_.c_str());
  }
  const std::string& path() const { return path_; }
  win::Header& header() { return *reinterpret_cast<win::Header*>(base_); }
  std::atomic<int> handled{0};
  std::atomic<int> raise{-1};        // a port an event arrives on (the server thread delivers it)
  std::atomic<bool> hang_up{false};  // the connection closed (then the next one is taken)
  std::atomic<int> connections{0};
  FakeDom0 dom0;

 private:
  void send(uint8_t type, uint16_t channel, const uint8_t* payload, uint32_t length) override {
    std::vector<uint8_t> out(proto::frame::kHeaderBytes);
    proto::frame::encode_header(out.data(), type, channel, payload, length);
    out.insert(out.end(), payload, payload + length);
    size_t done = 0;
    while (done < out.size() && !stop_)
      done += win::ring_write(header().to_host, base_ + win::kToHostOffset, win::kRingBytes, out.data() + done,
                              out.size() - done);
  }
  void serve() {
    std::vector<uint8_t> storage(proto::frame::kHeaderBytes + proto::kMaxRequestPayload);
    proto::FrameReceiver receiver(storage.data(), storage.size(), proto::kMaxRequestPayload, 1000);
    lib::relay::Server server(dom0, *this, kWindow, proto::kFlagWindow);
    uint8_t chunk[4096];
    while (!stop_) {
      bool broken = false;
      size_t n = win::ring_read(header().to_dom0, base_ + win::kToDom0Offset, win::kRingBytes, chunk,
                                std::min(sizeof(chunk), receiver.space()), broken);
      if (n == 0) {
        std::this_thread::sleep_for(std::chrono::microseconds(50));
        continue;
      }
      receiver.push(chunk, n, 0);
      for (proto::Received r = receiver.next(0); r.kind != proto::Received::Kind::nothing; r = receiver.next(0))
        if (r.kind == proto::Received::Kind::frame) {
          ++handled;
          server.handle_frame(r.type, r.channel, r.payload, r.length);
        }
    }
  }
  std::string path_;
  uint8_t* base_ = nullptr;
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

RelaySettings window_settings(const FakeWindowRelay& relay, int open_timeout_ms = 5000) {
  RelaySettings s;
  s.socket_path = "/nonexistent/the-window-needs-no-socket";
  s.window_path = relay.path();
  s.request_timeout_ms = 5000;
  s.open_timeout_ms = open_timeout_ms;
  return s;
}

TEST(LibxcRelayTransport, TheWindowCarriesTheSession) {
  FakeWindowRelay relay;
  std::string why;
  auto t = RelayTransport::open(window_settings(relay), why);
  ASSERT_TRUE(t) << why;
  EXPECT_NE(t->describe().find("window"), std::string::npos);
  int64_t result = 0;
  const uint64_t none[5] = {};
  ASSERT_EQ(t->hypercall(17, none, result), 0);
  EXPECT_EQ(result, 0x40011);
  // 200 KiB each way: many frames in flight through the 256 KiB rings, bytes intact.
  uint64_t address = 0;
  ASSERT_EQ(t->buffer_alloc(50, address), 0);
  std::vector<uint8_t> data(50 * 4096);
  for (size_t i = 0; i < data.size(); ++i) data[i] = uint8_t(i * 7 + i / 4096);
  ASSERT_EQ(t->buffer_write(address, data.data(), data.size()), 0);
  std::vector<uint8_t> back(data.size());
  ASSERT_EQ(t->buffer_read(address, back.data(), back.size()), 0);
  EXPECT_EQ(back, data);
  errno = 0;
  EXPECT_EQ(t->hypercall(0, none, result), -1);  // refused by the relay, as on the socket
  EXPECT_EQ(errno, EPERM);
}

TEST(LibxcRelayTransport, AWindowNeverAnnouncedFailsTheOpen) {
  FakeWindowRelay relay(false);
  std::string why;
  errno = 0;
  EXPECT_FALSE(RelayTransport::open(window_settings(relay, 300), why));
  EXPECT_EQ(errno, ETIMEDOUT);
  EXPECT_NE(why.find("no window"), std::string::npos) << why;
  EXPECT_EQ(relay.handled, 0);
}

TEST(LibxcRelayTransport, AWindowWithAnotherLayoutIsRefused) {
  FakeWindowRelay relay;
  relay.header().ring_bytes = win::kRingBytes * 2;  // a relay of another layout: not ours to guess
  std::string why;
  EXPECT_FALSE(RelayTransport::open(window_settings(relay, 300), why));
  EXPECT_EQ(errno, ETIMEDOUT);
}

TEST(LibxcRelayTransport, NoWindowFile) {
  RelaySettings s;
  s.window_path = "/nonexistent/window";
  std::string why;
  EXPECT_FALSE(RelayTransport::open(s, why));
  EXPECT_EQ(errno, ENOENT);
}
}  // namespace

// pvhvd's link (keep_across_drops): a drop is the errno of the request that saw it, then EAGAIN
// at once for every request until reopen() opens a new session on a new connection.
TEST(LibxcRelayTransport, AKeptLinkThatDropsIsReopened) {
  FakeRelay relay;
  auto t = connect(relay);
  t->keep_across_drops();
  int64_t result = 0;
  const uint64_t none[5] = {};
  ASSERT_EQ(t->hypercall(17, none, result), 0);
  relay.hang_up = true;
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  errno = 0;
  EXPECT_EQ(t->hypercall(17, none, result), -1);
  EXPECT_TRUE(errno == ECONNRESET || errno == EPIPE) << errno;
  EXPECT_NE(t->link_down(), 0);
  errno = 0;
  EXPECT_EQ(t->hypercall(17, none, result), -1);
  EXPECT_EQ(errno, EAGAIN);
  uint32_t port = 0;
  errno = 0;
  EXPECT_EQ(t->evtchn_wait({}, 100, port), -1);
  EXPECT_EQ(errno, EAGAIN);
  EXPECT_EQ(t->generation(), 0u);
  std::string why;
  ASSERT_EQ(t->reopen(2000, why), 0) << why;
  EXPECT_EQ(t->link_down(), 0);
  EXPECT_EQ(t->generation(), 1u);
  EXPECT_EQ(relay.connections, 2);
  ASSERT_EQ(t->hypercall(17, none, result), 0);
  EXPECT_EQ(result, 0x40011);
}

// dom0 silent for the request timeout drops a kept link too; an unkept one only times out.
TEST(LibxcRelayTransport, ASilentRelayDropsAKeptLink) {
  FakeRelay relay;
  auto t = connect(relay, 300);
  int64_t result = 0;
  const uint64_t none[5] = {};
  relay.silent = true;
  errno = 0;
  EXPECT_EQ(t->hypercall(17, none, result), -1);
  EXPECT_EQ(errno, ETIMEDOUT);
  EXPECT_EQ(t->link_down(), 0);  // not kept: the next request may still be answered
  t->keep_across_drops();
  errno = 0;
  EXPECT_EQ(t->hypercall(17, none, result), -1);
  EXPECT_EQ(errno, ETIMEDOUT);
  EXPECT_EQ(t->link_down(), ETIMEDOUT);
  errno = 0;
  EXPECT_EQ(t->hypercall(17, none, result), -1);
  EXPECT_EQ(errno, EAGAIN);
  relay.silent = false;
  std::string why;
  ASSERT_EQ(t->reopen(2000, why), 0) << why;
  ASSERT_EQ(t->hypercall(17, none, result), 0);
  EXPECT_EQ(result, 0x40011);
}

// Nobody to reopen to: reopen fails with the connection's errno and the link stays down.
TEST(LibxcRelayTransport, AReopenWithNoRelayFails) {
  auto relay = std::make_unique<FakeRelay>();
  auto t = connect(*relay);
  t->keep_across_drops();
  relay.reset();  // the socket gone
  int64_t result = 0;
  const uint64_t none[5] = {};
  EXPECT_EQ(t->hypercall(17, none, result), -1);
  std::string why;
  errno = 0;
  EXPECT_EQ(t->reopen(300, why), -1);
  EXPECT_EQ(errno, ENOENT) << why;
  EXPECT_NE(t->link_down(), 0);
  errno = 0;
  EXPECT_EQ(t->hypercall(17, none, result), -1);
  EXPECT_EQ(errno, EAGAIN);
}
