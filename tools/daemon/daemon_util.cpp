// pvhvd's small helpers (server.h).
#include "tools/daemon/server.h"

namespace pvhv::daemon::server {

uint64_t steady_ms() {
  using namespace std::chrono;
  return uint64_t(duration_cast<milliseconds>(steady_clock::now().time_since_epoch()).count());
}

int64_t unix_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

std::string dump(const Json& j) { return j.dump(-1, ' ', false, Json::error_handler_t::replace); }

void log(const char* format, ...) __attribute__((format(printf, 1, 2)));
void log(const char* format, ...) {
  va_list args;
  va_start(args, format);
  std::fprintf(stderr, "pvhvd: ");
  std::vfprintf(stderr, format, args);
  std::fprintf(stderr, "\n");
  va_end(args);
}

std::string random_uuid() {
  std::random_device device;
  std::array<uint8_t, 16> bytes{};
  for (auto& b : bytes) b = uint8_t(device());
  bytes[6] = uint8_t((bytes[6] & 0x0f) | 0x40);  // version 4, as libxl_uuid_generate
  bytes[8] = uint8_t((bytes[8] & 0x3f) | 0x80);
  return format_uuid(bytes);
}

bool read_file(const std::string& path, std::vector<uint8_t>& out) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return false;
  out.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  return true;
}

}  // namespace pvhv::daemon::server
