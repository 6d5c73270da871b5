#include "relay/server/relay_buffer_table.h"

namespace lib::relay {

BufferTable::Status BufferTable::place(uint32_t pages, uint64_t& address) const {
  if (pages == 0 || pages > kWindowPages) return Status::bad_range;
  if (count_ == kMaxBuffers) return Status::limit;
  uint32_t run = 0;
  for (uint32_t page = 0; page < kWindowPages; ++page) {
    run = page_used(page) ? 0 : run + 1;
    if (run == pages) {
      address = window_base_ + uint64_t(page + 1 - pages) * kPageBytes;
      return Status::ok;
    }
  }
  return Status::limit;
}

void BufferTable::mark(uint32_t first, uint32_t pages, bool used) {
  for (uint32_t page = first; page < first + pages; ++page) {
    if (used)
      used_[page / 64] |= 1ull << (page % 64);
    else
      used_[page / 64] &= ~(1ull << (page % 64));
  }
}

BufferTable::Status BufferTable::insert(uint64_t address, uint32_t pages, uint8_t* data) {
  if (pages == 0 || address < window_base_ || (address - window_base_) % kPageBytes) return Status::bad_range;
  uint64_t first = (address - window_base_) / kPageBytes;
  if (first + pages > kWindowPages) return Status::bad_range;
  for (uint32_t page = uint32_t(first); page < first + pages; ++page)
    if (page_used(page)) return Status::bad_range;
  for (Buffer& b : buffers_) {
    if (b.pages) continue;
    b = Buffer{address, pages, data};
    mark(uint32_t(first), pages, true);
    ++count_;
    pages_used_ += pages;
    return Status::ok;
  }
  return Status::limit;
}

BufferTable::Status BufferTable::remove(uint64_t address, Buffer& removed) {
  for (Buffer& b : buffers_) {
    if (!b.pages || b.address != address) continue;
    removed = b;
    mark(uint32_t((address - window_base_) / kPageBytes), b.pages, false);
    --count_;
    pages_used_ -= b.pages;
    b = Buffer{};
    return Status::ok;
  }
  return Status::no_buffer;
}

const BufferTable::Buffer* BufferTable::find(uint64_t address) const {
  for (const Buffer& b : buffers_)
    if (b.pages && address >= b.address && address < b.end()) return &b;
  return nullptr;
}

BufferTable::Status BufferTable::locate(uint64_t address, size_t length, const Buffer*& buffer) const {
  buffer = find(address);
  if (!buffer) return Status::no_buffer;
  // address < end, so end - address cannot wrap; compare lengths, never sums.
  if (length > buffer->end() - address) return Status::bad_range;
  return Status::ok;
}

bool BufferTable::covers(uint64_t address, uint64_t length) const {
  const Buffer* b;
  return locate(address, length, b) == Status::ok;
}

BufferTable::Status BufferTable::read(uint64_t address, void* out, size_t length) const {
  const Buffer* b;
  Status s = locate(address, length, b);
  if (s != Status::ok) return s;
  __builtin_memcpy(out, b->data + (address - b->address), length);
  return Status::ok;
}

BufferTable::Status BufferTable::write(uint64_t address, const void* in, size_t length) {
  const Buffer* b;
  Status s = locate(address, length, b);
  if (s != Status::ok) return s;
  __builtin_memcpy(b->data + (address - b->address), in, length);
  return Status::ok;
}

}  // namespace lib::relay
