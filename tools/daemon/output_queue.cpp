// A client's output queue with its console bound (output_queue.h).
#include "tools/daemon/output_queue.h"

#include <algorithm>

namespace pvhv::daemon {

void OutputQueue::push(std::string bytes, bool droppable) {
  if (droppable) droppable_bytes_ += bytes.size();
  pieces_.push_back({std::move(bytes), droppable});
  while (droppable_bytes_ > limit_ && drop_oldest_droppable()) {
  }
}

// The oldest droppable piece not being written loses what is over the limit, from its start
// (the whole piece if that is all of it or more).
bool OutputQueue::drop_oldest_droppable() {
  auto it = pieces_.begin() + (writing_ ? 1 : 0);
  it = std::find_if(it, pieces_.end(), [](const Piece& p) { return p.droppable; });
  if (it == pieces_.end()) return false;  // none (droppable_bytes_ says there is one)
  size_t excess = std::min(droppable_bytes_ - limit_, it->bytes.size());
  dropped_bytes_ += excess;
  droppable_bytes_ -= excess;
  if (excess == it->bytes.size())
    pieces_.erase(it);
  else
    it->bytes.erase(0, excess);
  return true;
}

const std::string& OutputQueue::begin_write() {
  writing_ = true;
  Piece& front = pieces_.front();
  if (front.droppable) droppable_bytes_ -= front.bytes.size();
  return front.bytes;
}

void OutputQueue::end_write() {
  writing_ = false;
  pieces_.pop_front();
}

}  // namespace pvhv::daemon
