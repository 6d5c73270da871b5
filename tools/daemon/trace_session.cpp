#include "tools/daemon/trace_session.h"

extern "C" {  // Debian's xenctrl.h declares C functions without extern "C" of its own
#include <xenctrl.h>
}
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <cstdio>
#include <cstring>
#include <optional>
#include <variant>
#include <vector>

#include "tools/daemon/trace_window.h"
#include "trace/capture/trace_writer.h"
#include "trace/format/ring.h"
#include "xenctrl_pvhv.h"

namespace pvhv::daemon {
namespace asio = boost::asio;

namespace {
// Per CPU: the most one t_info page lists (4 MiB; Xen reduces a larger request as ours does), so
// that a loaded host, whose drains come late, loses few records. The size is set once per boot.
constexpr unsigned long kBufferPages = 1022;
constexpr uint32_t kPage = 4096;
constexpr auto kDrainEvery = std::chrono::milliseconds(50);

Failure errno_failure(const std::string& what) {
  int error = errno ? errno : kEio;
  return Failure{error, what + ": " + std::strerror(error)};
}

// One byte written at the start and the file truncated again (a regular file; a device keeps
// what it took): whether the path takes trace data at all.
std::optional<Failure> probe_writable(int fd, const std::string& path) {
  struct stat st {};
  if (::fstat(fd, &st) != 0) return errno_failure("Could not open output file \"" + path + "\"");
  const char byte = 0;
  ssize_t n = ::write(fd, &byte, 1);
  if (n != 1) {
    if (n >= 0) errno = kEio;
    return errno_failure("Failed to write trace data to \"" + path + "\"");
  }
  if (S_ISREG(st.st_mode) && (::ftruncate(fd, 0) != 0 || ::lseek(fd, 0, SEEK_SET) != 0))
    return errno_failure("Failed to write trace data to \"" + path + "\"");
  return std::nullopt;
}
}  // namespace

// One recording: the file, each CPU's ring frames, the counts. Used by one link task at a time.
class TraceSession {
 public:
  static std::variant<std::shared_ptr<TraceSession>, Failure> open(xc_interface* xch, const std::string& path);
  ~TraceSession() {
    if (out_) std::fclose(out_);
  }
  std::optional<Failure> drain(xc_interface* xch);
  std::variant<Json, Failure> close(xc_interface* xch);

 private:
  struct Ring {
    uint32_t cpu = 0;
    std::vector<uint64_t> mfns;  // its pages in order: t_buf and data
  };
  std::optional<Failure> read_rings(xc_interface* xch, uint64_t t_info_mfn, uint64_t bytes);
  std::optional<Failure> drain_ring(xc_interface* xch, const Ring& ring);

  std::string path_;
  std::FILE* out_ = nullptr;
  trace::TraceWriter writer_;
  uint32_t pages_ = 0;
  std::vector<Ring> rings_;
  TraceCounts counts_;
  std::vector<uint8_t> copy_, window_;
};

std::variant<std::shared_ptr<TraceSession>, Failure> TraceSession::open(xc_interface* xch, const std::string& path) {
  auto session = std::make_shared<TraceSession>();
  session->path_ = path;
  // As xentrace opens its output file, but not blocking (a FIFO nobody reads is ENXIO, not a
  // link thread stuck); then a byte written and taken back, so that a path that opens but takes
  // nothing (/proc/version, /dev/full) is refused here, with the buffers untouched.
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NONBLOCK, 0644);
  if (fd < 0) return errno_failure("Could not open output file \"" + path + "\"");
  if (int flags = ::fcntl(fd, F_GETFL); flags < 0 || ::fcntl(fd, F_SETFL, flags & ~O_NONBLOCK) != 0) {
    auto failure = errno_failure("Could not open output file \"" + path + "\"");
    ::close(fd);
    return failure;
  }
  if (auto failure = probe_writable(fd, path)) {
    ::close(fd);
    return *failure;
  }
  session->out_ = ::fdopen(fd, "wb");
  if (!session->out_) {
    auto failure = errno_failure("Could not open output file \"" + path + "\"");
    ::close(fd);
    return failure;
  }
  session->writer_ = trace::TraceWriter(session->out_);
  unsigned long mfn = 0, size = 0;
  if (xc_tbuf_enable(xch, kBufferPages, &mfn, &size) != 0 || mfn == 0) return errno_failure("xc_tbuf_enable");
  if (auto failure = session->read_rings(xch, mfn, size)) {
    xc_tbuf_disable(xch);
    return *failure;
  }
  return session;
}

// t_info (Xen's public/trace.h): tbuf_size pages per CPU, then per CPU the offset (in 32-bit
// words) of its list of page frames. It is `bytes` long (get_info's size) in contiguous frames
// from t_info_mfn (Xen allocates it in one piece; with several CPUs its lists pass the first page).
std::optional<Failure> TraceSession::read_rings(xc_interface* xch, uint64_t t_info_mfn, uint64_t bytes) {
  constexpr uint64_t kMostInfoPages = 64;
  const uint64_t info_pages = bytes ? (bytes + kPage - 1) / kPage : 1;
  if (info_pages > kMostInfoPages) return Failure{kEio, "t_info is " + std::to_string(bytes) + " bytes long"};
  std::vector<uint8_t> info(info_pages * kPage);
  for (uint64_t page = 0; page < info_pages; ++page)
    if (pvhv_xc_foreign_read(xch, DOMID_XEN, t_info_mfn + page, 0, info.data() + page * kPage, kPage) != 0)
      return errno_failure("reading t_info");
  uint16_t pages;
  std::memcpy(&pages, info.data(), 2);
  xc_physinfo_t physinfo{};
  if (xc_physinfo(xch, &physinfo) != 0) return errno_failure("xc_physinfo");
  if (pages == 0 || uint64_t(pages) * kPage < sizeof(t_buf) + trace::TraceRing::kMinimumBytes)
    return Failure{kEio, "the trace buffers have " + std::to_string(pages) + " pages"};
  pages_ = pages;
  for (uint32_t cpu = 0; cpu <= physinfo.max_cpu_id; ++cpu) {
    uint16_t offset;
    if (2 + 2 * (cpu + 1) > kPage) break;
    std::memcpy(&offset, info.data() + 2 + 2 * cpu, 2);
    if (offset == 0) continue;  // no buffer for this CPU
    if (uint64_t(offset) * 4 + uint64_t(pages) * 4 > info.size())
      return Failure{kEio, "t_info's page list of CPU " + std::to_string(cpu) + " is beyond its end"};
    Ring ring{cpu, {}};
    for (uint32_t i = 0; i < pages; ++i) {
      uint32_t frame;
      std::memcpy(&frame, info.data() + size_t(offset) * 4 + 4 * i, 4);
      ring.mfns.push_back(frame);
    }
    rings_.push_back(ring);
  }
  if (rings_.empty()) return Failure{kEio, "t_info lists no CPU's trace buffer"};
  return std::nullopt;
}

// The ring copied (its header first: nothing to do when cons == prod), the whole records taken
// with the consumer of trace/format/ring.h on the copy, its cons written back, the window written.
std::optional<Failure> TraceSession::drain_ring(xc_interface* xch, const Ring& ring) {
  copy_.assign(size_t(pages_) * kPage, 0);
  if (pvhv_xc_foreign_read(xch, DOMID_XEN, ring.mfns[0], 0, copy_.data(), kPage) != 0)
    return errno_failure("reading a trace buffer");
  t_buf header;
  std::memcpy(&header, copy_.data(), sizeof(header));
  if (header.cons == header.prod) return std::nullopt;
  // Only the pages holding unconsumed bytes (cons and prod run modulo twice the data size).
  const uint32_t data_bytes = pages_ * kPage - uint32_t(sizeof(t_buf));
  if (header.cons >= 2 * data_bytes || header.prod >= 2 * data_bytes) return std::nullopt;  // not ours to fix
  const uint32_t from = header.cons % data_bytes, to = header.prod % data_bytes;
  auto read_pages = [&](uint32_t first_byte, uint32_t end_byte) -> bool {  // data offsets, end exclusive
    for (uint32_t page = (uint32_t(sizeof(t_buf)) + first_byte) / kPage;
         page < pages_ && page * kPage < uint32_t(sizeof(t_buf)) + end_byte; ++page)
      if (page != 0 &&
          pvhv_xc_foreign_read(xch, DOMID_XEN, ring.mfns[page], 0, copy_.data() + size_t(page) * kPage, kPage) != 0)
        return false;
    return true;
  };
  bool read = from < to ? read_pages(from, to) : read_pages(from, data_bytes) && read_pages(0, to);
  if (!read) return errno_failure("reading a trace buffer");
  auto* copied_header = reinterpret_cast<t_buf*>(copy_.data());
  trace::TraceRing consumer(copied_header, copied_header + 1, pages_ * kPage - uint32_t(sizeof(t_buf)));
  window_.resize(consumer.size());
  uint32_t bytes = consumer.copy_out(window_.data(), uint32_t(window_.size()));
  if (bytes == 0) return std::nullopt;
  uint32_t cons = copied_header->cons;
  if (pvhv_xc_foreign_write(xch, DOMID_XEN, ring.mfns[0], offsetof(t_buf, cons), &cons, sizeof(cons)) != 0)
    return errno_failure("releasing trace records");
  if (!writer_.window(ring.cpu, window_.data(), bytes)) return errno_failure("writing \"" + path_ + "\"");
  count_trace_window(window_.data(), bytes, counts_);
  return std::nullopt;
}

std::optional<Failure> TraceSession::drain(xc_interface* xch) {
  for (const Ring& ring : rings_)
    if (auto failure = drain_ring(xch, ring)) return failure;
  std::fflush(out_);
  return std::nullopt;
}

std::variant<Json, Failure> TraceSession::close(xc_interface* xch) {
  auto failure = drain(xch);
  xc_tbuf_disable(xch);
  auto last = drain(xch);  // what was written while disabling
  bool written = std::fclose(out_) == 0;
  out_ = nullptr;
  if (failure || last) return failure ? *failure : *last;
  if (!written) return errno_failure("closing \"" + path_ + "\"");
  return Json{{"records", counts_.records}, {"lost", counts_.lost}, {"file", path_}, {"bytes", writer_.written()}};
}

// ---- TraceRecorder: the loop's side ----

TraceRecorder::TraceRecorder(asio::io_context& io, asio::thread_pool& pool, xc_interface_core*& xch)
    : io_(io), pool_(pool), xch_(xch), timer_(io) {}

TraceRecorder::~TraceRecorder() = default;

void TraceRecorder::start(const Json& body, uint64_t id, Reply reply) {
  auto file = string_field(body, "file");
  if (auto* failure = std::get_if<Failure>(&file)) return reply(error_answer(id, *failure));
  const auto& path = std::get<std::optional<std::string>>(file);
  if (!path || path->empty() || (*path)[0] != '/')
    return reply(error_answer(id, {kEinval, "trace_start needs \"file\", an absolute path"}));
  if (session_ || starting_) return reply(error_answer(id, {kEbusy, "a trace is already being recorded"}));
  starting_ = true;
  asio::post(pool_, [this, path = *path, id, reply] {
    auto opened = TraceSession::open(xch_, path);
    asio::post(io_, [this, opened = std::move(opened), id, reply]() mutable {
      starting_ = false;
      if (auto* failure = std::get_if<Failure>(&opened)) return reply(error_answer(id, *failure));
      session_ = std::get<std::shared_ptr<TraceSession>>(opened);
      schedule_drain();
      reply(ok_answer(id));
    });
  });
}

void TraceRecorder::schedule_drain() {
  timer_.expires_after(kDrainEvery);
  timer_.async_wait([this](boost::system::error_code error) {
    if (error || !session_ || draining_) return;
    draining_ = true;
    asio::post(pool_, [this, session = session_] {
      session->drain(xch_);  // a failed read is tried again next time; stop reports it
      asio::post(io_, [this] { after_drain(); });
    });
  });
}

void TraceRecorder::after_drain() {
  draining_ = false;
  if (after_drain_) {
    auto next = std::move(after_drain_);
    after_drain_ = nullptr;
    return next();
  }
  if (session_) schedule_drain();
}

void TraceRecorder::stop(uint64_t id, Reply reply) {
  if (!session_ || after_drain_) return reply(error_answer(id, {kEnoent, "no trace is being recorded"}));
  auto do_stop = [this, id, reply] {
    timer_.cancel();
    auto session = std::move(session_);
    session_ = nullptr;
    asio::post(pool_, [this, session, id, reply] {
      auto closed = session->close(xch_);
      asio::post(io_, [closed = std::move(closed), id, reply] {
        if (auto* failure = std::get_if<Failure>(&closed)) return reply(error_answer(id, *failure));
        Json answer = std::get<Json>(closed);
        answer["id"] = id;
        answer["ok"] = true;
        reply(answer);
      });
    });
  };
  if (draining_)
    after_drain_ = do_stop;
  else
    do_stop();
}

void TraceRecorder::finish() {
  timer_.cancel();
  if (session_ && !draining_) session_->close(xch_);
  session_ = nullptr;
}

}  // namespace pvhv::daemon
