// The JSON-lines client of pvhvd (see client.h).
#include "tools/xl/client.h"

#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

namespace pvhv::xl {

std::string daemon_socket_path() {
  const char* dir = std::getenv("PVHV_STATE_DIR");
  return std::string(dir && *dir ? dir : "/var/lib/pvhv") + "/pvhvd.sock";
}

std::optional<Client> Client::connect(const std::string& path, std::string& error) {
  const std::string prefix = "xl: cannot connect to pvhvd at " + path + ": ";
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  if (path.size() >= sizeof(address.sun_path)) {
    error = prefix + std::strerror(ENAMETOOLONG);
    return std::nullopt;
  }
  std::memcpy(address.sun_path, path.c_str(), path.size() + 1);
  const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0 || ::connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0) {
    error = prefix + std::strerror(errno);
    if (fd >= 0) ::close(fd);
    return std::nullopt;
  }
  Client client(fd);
  try {
    const Json hello = client.call({{"op", "hello"}, {"version", kProtocolVersion}});
    if (!hello.value("ok", false) || hello.value("version", 0) != kProtocolVersion) {
      error = "xl: pvhvd at " + path + " does not speak protocol version " + std::to_string(kProtocolVersion) +
              (hello.contains("error") ? ": " + hello["error"].dump() : std::string());
      return std::nullopt;
    }
  } catch (const DaemonLost& lost) {
    error = prefix + lost.reason;
    return std::nullopt;
  }
  return client;
}

Client::Client(Client&& other) noexcept
    : fd_(other.fd_), next_id_(other.next_id_), pending_(std::move(other.pending_)) {
  other.fd_ = -1;
}

Client::~Client() {
  if (fd_ >= 0) ::close(fd_);
}

Json Client::call(Json request) {
  send(std::move(request));
  return receive();
}

void Client::send(Json request) {
  request["id"] = next_id_++;
  const std::string line = request.dump() + "\n";
  for (size_t done = 0; done < line.size();) {
    const ssize_t n = ::send(fd_, line.data() + done, line.size() - done, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) throw DaemonLost{std::strerror(errno)};
    done += static_cast<size_t>(n);
  }
}

Json Client::receive() {
  for (;;) {
    const size_t eol = pending_.find('\n');
    if (eol != std::string::npos) {
      const std::string line = pending_.substr(0, eol);
      pending_.erase(0, eol + 1);
      Json answer = Json::parse(line, nullptr, false);
      if (answer.is_discarded() || !answer.is_object()) throw DaemonLost{"malformed answer from pvhvd"};
      return answer;
    }
    char buf[65536];
    const ssize_t n = ::read(fd_, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) throw DaemonLost{std::strerror(errno)};
    if (n == 0) throw DaemonLost{"pvhvd closed the connection"};
    pending_.append(buf, static_cast<size_t>(n));
  }
}

std::string Client::take_pending() {
  std::string out;
  out.swap(pending_);
  return out;
}

}  // namespace pvhv::xl
