#pragma once
// The dom0 relay's hypercall buffers (libxencall's buffers, served over the link): page runs
// in a window of the kernel's address space that the host fills and reads back, and whose
// addresses it passes to hypercalls. The table decides where a buffer goes (first fit in the
// window), remembers it, and checks every access the host asks for: a range is only ever
// inside one existing buffer. Pure: the kernel maps the frames, the table only knows where.
#include <stddef.h>
#include <stdint.h>

namespace lib::relay {

class BufferTable {
 public:
  static constexpr uint32_t kWindowPages = 1024;  // 4 MiB of buffers at most
  static constexpr uint32_t kMaxBuffers = 64;
  static constexpr uint64_t kPageBytes = 4096;

  struct Buffer {
    uint64_t address = 0;     // its address in dom0 (what hypercalls are given)
    uint32_t pages = 0;       // 0: slot unused
    uint8_t* data = nullptr;  // where the relay reads and writes it (in the kernel: address)
    uint64_t end() const { return address + pages * kPageBytes; }
  };
  enum class Status { ok, no_buffer, bad_range, limit };

  explicit BufferTable(uint64_t window_base) : window_base_(window_base) {}

  // Where a buffer of `pages` would go: limit if the window or the table is full, bad_range
  // for 0 pages or more than the window.
  Status place(uint32_t pages, uint64_t& address) const;
  // Records a buffer at an address place() gave, accessed through `data`.
  Status insert(uint64_t address, uint32_t pages, uint8_t* data);
  // Forgets the buffer that starts at `address` (no_buffer otherwise) and says what it was.
  Status remove(uint64_t address, Buffer& removed);

  // The buffer holding `address`, or null.
  const Buffer* find(uint64_t address) const;
  // True if [address, address + length) lies inside one buffer (length 0: address inside one).
  bool covers(uint64_t address, uint64_t length) const;
  // Checked copies: no_buffer when `address` is in no buffer, bad_range when the range leaves it.
  Status read(uint64_t address, void* out, size_t length) const;
  Status write(uint64_t address, const void* in, size_t length);

  uint32_t count() const { return count_; }
  uint32_t pages_used() const { return pages_used_; }
  uint64_t window_base() const { return window_base_; }
  uint64_t window_end() const { return window_base_ + kWindowPages * kPageBytes; }
  const Buffer& slot(uint32_t index) const { return buffers_[index]; }

 private:
  Status locate(uint64_t address, size_t length, const Buffer*& buffer) const;
  bool page_used(uint32_t page) const { return used_[page / 64] >> (page % 64) & 1; }
  void mark(uint32_t first, uint32_t pages, bool used);

  uint64_t window_base_;
  Buffer buffers_[kMaxBuffers];
  uint64_t used_[kWindowPages / 64] = {};
  uint32_t count_ = 0;
  uint32_t pages_used_ = 0;
};

}  // namespace lib::relay
