// xl's connection to pvhvd: a Unix stream socket speaking JSON lines (protocol version 1,
// tools/PROTOCOL.md). Blocking and single-threaded: xl sends requests and reads the answers in
// order; `console` then turns the connection into a raw byte stream.
#pragma once
#include <optional>
#include <string>

#include "tools/xl/model.h"

namespace pvhv::xl {

// $PVHV_STATE_DIR/pvhvd.sock, or /var/lib/pvhv/pvhvd.sock without the variable.
std::string daemon_socket_path();

class Client {
 public:
  // Connects and says hello; nullopt with the one-line reason xl prints.
  static std::optional<Client> connect(const std::string& path, std::string& error);
  Client(Client&& other) noexcept;
  Client& operator=(Client&&) = delete;
  ~Client();

  // Sends one request (an id is added) and returns its answer.
  Json call(Json request);
  // Pipelining: send now, read the answers later in the same order.
  void send(Json request);
  Json receive();

  int fd() const { return fd_; }
  // Bytes that arrived after the last answer line (the start of a console stream).
  std::string take_pending();

 private:
  explicit Client(int fd) : fd_(fd) {}
  int fd_ = -1;
  uint64_t next_id_ = 1;
  std::string pending_;
};

// The daemon closed the connection or sent something that is not an answer.
struct DaemonLost {
  std::string reason;
};

}  // namespace pvhv::xl
