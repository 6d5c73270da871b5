// What the daemon has yet to write to one client, in order. Console bytes may be dropped: a
// console client that stops reading costs the daemon a bounded buffer, no more (xenconsoled
// likewise bounds what it buffers per console, the domain's console/limit, and discards
// beyond it). The oldest console bytes go first, never an answer, never the piece being
// written. Pure.
#pragma once
#include <stddef.h>
#include <stdint.h>

#include <deque>
#include <string>

namespace pvhv::daemon {

class OutputQueue {
 public:
  // libxl's console/limit (LIBXL_XENCONSOLE_LIMIT): what xenconsoled buffers for a console.
  static constexpr size_t kConsoleLimit = 1024 * 1024;

  explicit OutputQueue(size_t droppable_limit = kConsoleLimit) : limit_(droppable_limit) {}

  // Queues `bytes`; `droppable` (console output) may later be dropped, oldest first, so that
  // the droppable bytes queued stay within the limit.
  void push(std::string bytes, bool droppable);
  bool empty() const { return pieces_.empty(); }
  // The next piece to write; it is kept whole and in place until written.
  const std::string& begin_write();
  void end_write();  // the piece begin_write gave is written
  bool writing() const { return writing_; }

  size_t droppable_bytes() const { return droppable_bytes_; }
  uint64_t dropped_bytes() const { return dropped_bytes_; }

 private:
  struct Piece {
    std::string bytes;
    bool droppable;
  };
  bool drop_oldest_droppable();

  size_t limit_;
  std::deque<Piece> pieces_;
  bool writing_ = false;        // pieces_.front() is being written
  size_t droppable_bytes_ = 0;  // queued, not being written
  uint64_t dropped_bytes_ = 0;
};

}  // namespace pvhv::daemon
