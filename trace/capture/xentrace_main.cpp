// build/bin/xentrace: reads the framed record stream of the hypervisor's dom0 streamer
// (trace/PROTOCOL.md) from a file, FIFO, character device, stdin or UNIX socket and writes a
// trace file with xentrace's per-CPU framing.
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <sys/socket.h>
#include <sys/un.h>
#include <fcntl.h>
#include <unistd.h>

#include "trace/analyze/cpu_hz.h"
#include "trace/capture/capture.h"

using namespace trace;

namespace {

const char* kUsage =
    "usage: xentrace [--input=PATH|-|unix:SOCKET] [--tsc-hz=HZ] [--quiet] OUTPUT\n"
    "  reads framed trace records (trace/PROTOCOL.md) until END or end of input and writes\n"
    "  OUTPUT in Xen's xentrace format (per-CPU windows with TRC_TRACE_CPU_CHANGE headers).\n";

int open_input(const std::string& input) {
  if (input == "-") return 0;
  if (input.rfind("unix:", 0) == 0) {
    std::string path = input.substr(5);
    sockaddr_un address{};
    if (path.size() >= sizeof address.sun_path) return -1;
    address.sun_family = AF_UNIX;
    std::memcpy(address.sun_path, path.c_str(), path.size() + 1);
    int fd = socket(AF_UNIX, SOCK_STREAM, 0);
    if (fd >= 0 && connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0) {
      close(fd);
      return -1;
    }
    return fd;
  }
  return open(input.c_str(), O_RDONLY);
}

}  // namespace

int main(int argc, char** argv) {
  std::string input = "-", output;
  uint64_t tsc_hz = 0;
  bool quiet = false;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg.rfind("--input=", 0) == 0)
      input = arg.substr(8);
    else if (arg.rfind("--tsc-hz=", 0) == 0) {
      auto hz = parse_cpu_hz(arg.substr(9));
      if (!hz) {
        std::fprintf(stderr, "xentrace: invalid %s\n", arg.c_str());
        return 1;
      }
      tsc_hz = *hz;
    } else if (arg == "--quiet")
      quiet = true;
    else if (arg == "--help" || arg == "-h") {
      std::fputs(kUsage, stdout);
      return 0;
    } else if (arg[0] == '-' || !output.empty()) {
      std::fprintf(stderr, "xentrace: unexpected argument %s\n%s", arg.c_str(), kUsage);
      return 1;
    } else
      output = arg;
  }
  if (output.empty()) {
    std::fputs(kUsage, stderr);
    return 1;
  }
  int fd = open_input(input);
  if (fd < 0) {
    std::fprintf(stderr, "xentrace: cannot open %s: %s\n", input.c_str(), std::strerror(errno));
    return 2;
  }
  std::FILE* out = std::fopen(output.c_str(), "wb");
  if (!out) {
    std::fprintf(stderr, "xentrace: cannot create %s: %s\n", output.c_str(), std::strerror(errno));
    return 2;
  }
  TraceWriter writer(out);
  Capture capture(writer, tsc_hz);
  std::vector<uint8_t> chunk(1 << 16);
  while (!capture.ended()) {
    ssize_t n = read(fd, chunk.data(), chunk.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    capture.feed(chunk.data(), size_t(n));
  }
  const CaptureReport& report = capture.finish();
  bool io_error = report.write_error || std::fclose(out) != 0;
  if (fd > 0) close(fd);
  for (const std::string& p : report.problems) std::fprintf(stderr, "xentrace: %s\n", p.c_str());
  if (!quiet)
    std::fprintf(stderr,
                 "xentrace: %llu frames, %llu windows, %llu record bytes, %u cpus, TSC %llu Hz, "
                 "%llu control frames, %llu bytes skipped, %llu lost by streamer\n",
                 (unsigned long long)report.frames, (unsigned long long)report.windows,
                 (unsigned long long)report.record_bytes, report.cpus, (unsigned long long)report.tsc_hz,
                 (unsigned long long)report.control_frames, (unsigned long long)report.skipped_bytes,
                 (unsigned long long)report.streamer_lost_bytes);
  if (io_error) {
    std::fprintf(stderr, "xentrace: write error on %s\n", output.c_str());
    return 2;
  }
  return report.problems.empty() ? 0 : 3;
}
