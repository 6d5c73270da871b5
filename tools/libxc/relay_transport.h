// The relay's socket as a transport: QEMU's chardev for dom0's COM2 as a Unix socket, shared
// with the trace stream (frames of trace/PROTOCOL.md, skipped here or copied to a file).
#pragma once
#include <cstdio>
#include <atomic>
#include <deque>
#include <mutex>
#include <optional>
#include <vector>

#include "tools/libxc/transport.h"
#include "common/relay/frame_receiver.h"

namespace pvhv::xc {

struct RelaySettings {
  std::string socket_path;
  int request_timeout_ms = 30000;  // PVHV_XENCTRL_TIMEOUT_MS
  int open_timeout_ms = 30000;     // PVHV_XENCTRL_OPEN_TIMEOUT_MS: the relay may still be booting
  std::string trace_path;          // PVHV_XENCTRL_TRACE: trace frames seen on the link go here
  // PVHV_XENCTRL_WINDOW: the file behind the relay's bulk window (tools/PROTOCOL.md); when set,
  // every frame goes through the window and the socket is not used. Empty: the socket.
  std::string window_path;
  // PVHV_XENCTRL=daemon:<path>: pvhvd's client socket; the `relay` op first, then frames the
  // daemon forwards on its own session (tools/PROTOCOL.md).
  bool through_daemon = false;
};

class RelayTransport final : public Transport {
 public:
  // Connects and opens a session (retrying until the open timeout); null with errno on failure.
  static std::unique_ptr<RelayTransport> open(const RelaySettings& settings, std::string& why);
  ~RelayTransport() override;

  int hypercall(uint32_t number, const uint64_t (&args)[5], int64_t& result) override;
  int buffer_alloc(uint32_t pages, uint64_t& address) override;
  int buffer_free(uint64_t address) override;
  int buffer_write(uint64_t address, const void* data, size_t length) override;
  int buffer_read(uint64_t address, void* data, size_t length) override;
  int foreign_read(uint32_t domid, uint64_t frame, uint32_t offset, void* out, size_t length) override;
  int foreign_write(uint32_t domid, uint64_t frame, uint32_t offset, const void* data, size_t length) override;
  int foreign_map(uint32_t domid, uint64_t frame, uint32_t& handle) override;
  int foreign_unmap(uint32_t handle) override;
  int mapped_read(uint32_t handle, uint32_t offset, void* out, size_t length) override;
  int mapped_write(uint32_t handle, uint32_t offset, const void* data, size_t length) override;
  int evtchn_bind_interdomain(uint32_t remote_domid, uint32_t remote_port, uint32_t& local_port) override;
  int evtchn_notify(uint32_t port) override;
  int evtchn_unmask(uint32_t port) override;
  int evtchn_close(uint32_t port) override;
  int evtchn_bind_virq(uint32_t virq, uint32_t& local_port) override;
  int evtchn_wait(const std::vector<uint32_t>& ports, int timeout_ms, uint32_t& port) override;
  int dom0_shutdown(uint32_t reason) override;
  const std::string& describe() const override { return description_; }
  void keep_across_drops() override { keep_across_drops_ = true; }
  int link_down() const override { return down_errno_.load(); }
  uint64_t generation() const override { return generation_.load(); }
  int reopen(int timeout_ms, std::string& why) override;

  // One request of another client, renumbered onto this session (pvhvd's relay forwarding):
  // `fields` after the sequence number; the answer's type and fields (an ERROR frame's too).
  // -1 with errno when no answer came (the link, a timeout); OPEN and SHUTDOWN are EINVAL.
  int forward(uint8_t type, const std::vector<uint8_t>& fields, uint8_t& answer_type,
              std::vector<uint8_t>& answer_fields) override;

  // Ports with an event the relay pushed, oldest first (evtchn_wait takes them).
  std::deque<uint32_t>& events() { return events_; }

 private:
  struct Answer {
    uint8_t type = 0;
    std::vector<uint8_t> payload;  // after the sequence number
  };

  explicit RelayTransport(const RelaySettings& settings);
  int connect_socket(int timeout_ms);
  int daemon_handshake(std::string& why);
  // The bulk window: mapped and announced by dom0 (waits for it until the open timeout).
  int map_window(int timeout_ms, std::string& why);
  int window_send(const uint8_t* data, size_t length);
  // Moves what dom0 wrote into the receiver, waiting at most `wait_ms` for something; -1 errno.
  int window_receive(uint8_t* buffer, size_t want, int wait_ms);
  int open_session(std::string& why);
  // Sends one request (seq prepended) and waits for its answer; a relay error becomes errno.
  int exchange(uint8_t type, const std::vector<uint8_t>& fields, uint8_t expected, Answer& answer);
  int send_frame(uint8_t type, const std::vector<uint8_t>& payload);
  // A request answered by DATA of exactly `length` bytes, copied to `out`.
  int data_request(uint8_t type, const std::vector<uint8_t>& fields, void* out, size_t length);
  // A request whose fields are followed by `length` bytes of data (at most a page: EINVAL
  // otherwise), answered `ok`.
  int data_write(uint8_t type, std::vector<uint8_t> fields, const void* data, size_t length);
  int port_request(uint8_t type, uint32_t port);  // NOTIFY, UNMASK, CLOSE: answered OK
  // A request answered by `answer_type` (PORT, MAPPING) carrying one u32: a port, a handle.
  int u32_request(uint8_t type, const std::vector<uint8_t>& fields, uint8_t answer_type, uint32_t& value);
  bool take_event(const std::vector<uint32_t>& ports, uint32_t& port);  // under mutex_
  // Reads until an answer to `seq` arrives. kDamaged: the relay reported the request in flight
  // truncated or corrupt (it never ran it), so the same frame may be sent again.
  static constexpr int kDamaged = -2;
  int await(uint32_t seq, int timeout_ms, Answer& answer);
  void take(const relay::Received& frame, uint32_t seq, bool& answered, Answer& answer, int& error);
  // Under mutex_, with keep_across_drops(): the link is down with `error` (the socket closed).
  void mark_down(int error);

  RelaySettings settings_;
  std::string description_;
  int fd_ = -1;
  uint8_t* window_ = nullptr;  // the bulk window's mapping, when it is the path
  std::vector<uint8_t> storage_;
  relay::FrameReceiver receiver_;
  uint32_t next_seq_ = 1;
  uint32_t max_data_ = relay::kMaxData;
  std::FILE* trace_ = nullptr;
  std::deque<uint32_t> events_;
  bool dom0_stopped_ = false;
  bool trace_on_link_ = false;  // OPENED said trace records share the link
  bool saw_trace_end_ = false;
  bool trace_started_ = false;           // a HELLO came: trace frames from here on are copied
  bool request_damaged_ = false;         // the relay got the request in flight damaged: send it again
  std::optional<uint32_t> resync_seq_;   // the number the relay waits for, when it is not ours
  std::mutex mutex_;                     // one request at a time per handle, as the relay serves them
  std::atomic<int> requests_active_{0};  // requests in flight or waiting for mutex_
  bool keep_across_drops_ = false;
  std::atomic<int> down_errno_{0};
  std::atomic<uint64_t> generation_{0};
};

}  // namespace pvhv::xc
