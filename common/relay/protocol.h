// The relay protocol (tools/PROTOCOL.md): the messages between the host's toolstack and the
// dom0 relay, carried in the frames of trace/PROTOCOL.md (common/stream/stream_frame.h) as its
// control frame types (0x80..0xff). Freestanding and header-only: the dom0 relay (guest kernel)
// and the host library (tools/libxc) share this one definition of every type, layout, limit
// and error code.
#pragma once
#include <stddef.h>
#include <stdint.h>

#include "common/stream/stream_frame.h"

namespace relay {
namespace frame = ::trace::stream_frame;

constexpr uint32_t kProtocolVersion = 1;

// What the relay accepts in one frame: a request's fields plus at most kMaxData bytes of data.
// Larger transfers are split by the host (buffers can be written and read in pieces).
constexpr uint32_t kMaxData = 32 * 1024;
constexpr uint32_t kMaxRequestPayload = kMaxData + 64;
// Every request and every answer starts with a 32-bit sequence number; frames the relay
// sends on its own (errors about bytes that were no request) carry this one.
constexpr uint32_t kNoSequence = 0xffffffffu;
constexpr uint32_t kPageBytes = 4096;

enum Type : uint8_t {
  // Requests, host -> dom0.
  open = 0x80,                     // u32 seq, u32 version
  hypercall = 0x81,                // u32 seq, u32 number, u64 arguments[5]
  buffer_alloc = 0x82,             // u32 seq, u32 pages
  buffer_free = 0x83,              // u32 seq, u64 address
  buffer_write = 0x84,             // u32 seq, u64 address, data
  buffer_read = 0x85,              // u32 seq, u64 address, u32 length
  foreign_read = 0x86,             // u32 seq, u32 domid, u64 frame, u32 offset, u32 length
  foreign_write = 0x87,            // u32 seq, u32 domid, u64 frame, u32 offset, data
  evtchn_bind_virq = 0x88,         // u32 seq, u32 virq
  evtchn_bind_interdomain = 0x89,  // u32 seq, u32 remote domid, u32 remote port
  evtchn_notify = 0x8a,            // u32 seq, u32 port
  evtchn_unmask = 0x8b,            // u32 seq, u32 port
  evtchn_close = 0x8c,             // u32 seq, u32 port
  foreign_map = 0x8d,              // u32 seq, u32 domid, u64 frame: mapped writable until FOREIGN_UNMAP
  foreign_unmap = 0x8e,            // u32 seq, u32 handle
  shutdown = 0x8f,                 // u32 seq, u32 reason (SHUTDOWN_*)
  mapped_read = 0x90,              // u32 seq, u32 handle, u32 offset, u32 length
  mapped_write = 0x91,             // u32 seq, u32 handle, u32 offset, data
  // Answers, dom0 -> host (seq = the request's).
  opened = 0xa0,   // u32 seq, u32 version, u32 max payload, u32 max data, u32 max buffers,
                   // u32 buffer pages, u32 flags
  result = 0xa1,   // u32 seq, i64 value (the hypercall's rax)
  buffer = 0xa2,   // u32 seq, u32 pages, u64 address
  ok = 0xa3,       // u32 seq
  data = 0xa4,     // u32 seq, bytes
  port = 0xa5,     // u32 seq, u32 port
  mapping = 0xa6,  // u32 seq, u32 handle (a FOREIGN_MAP's)
  error = 0xbf,    // u32 seq, u32 code, u32 type of the offending frame, i64 detail
  // Pushed by dom0.
  event = 0xc0,  // u32 port: an event arrived on a port the host bound (now masked)
};

constexpr bool is_request(uint8_t type) { return type >= 0x80 && type < 0xa0; }

// OPENED flags.
constexpr uint32_t kFlagTraceOnLink = 1u << 0;  // trace records share the link (trace=capture)
constexpr uint32_t kFlagWindow = 1u << 1;       // the bulk window serves too (PROTOCOL.md, window.h)

enum class Error : uint32_t {
  corrupt = 1,       // CRC mismatch; detail: the length the header claimed
  truncated = 2,     // a frame stopped arriving part way; detail: bytes of it received
  oversized = 3,     // payload over kMaxRequestPayload; detail: its length
  skipped = 4,       // bytes that were no frame; detail: how many
  unknown_type = 5,  // not a request type; detail: the type
  malformed = 6,     // payload size wrong for its type; detail: the size
  no_session = 7,    // a request before OPEN
  out_of_order = 8,  // sequence number not the next; detail: the one expected
  version = 9,       // OPEN with a version the relay does not speak; detail: the relay's
  no_buffer = 10,    // no buffer at that address; detail: the address
  refused = 11,      // not forwarded (would break dom0); detail: a Refusal
  no_memory = 12,    // dom0 has no frames for the buffer
  bad_range = 13,    // outside the buffer or frame, or a bad size; detail: the offset/address
  hypervisor = 14,   // the hypervisor refused; detail: its (negative) error code
  no_port = 15,      // not a port the host bound; detail: the port
  limit = 16,        // a table is full (buffers, window pages, ports, mappings); detail: the limit
  no_mapping = 17,   // not a mapping the host holds; detail: the handle
};

// Why a request was refused (the detail of Error::refused).
enum class Refusal : uint32_t {
  none = 0,
  hypercall = 1,        // a hypercall number the relay never forwards
  sub_op = 2,           // a sub-operation of an allowed hypercall it does not forward
  pointer = 3,          // a pointer argument outside every buffer (or its structure does not fit)
  own_domain = 4,       // the operation would act on dom0 itself
  special_domain = 5,   // DOMID_IO and the other reserved ids (DOMID_XEN is allowed)
  own_page_tables = 6,  // mmu_update/mmuext_op on dom0's own page tables
};

// Little-endian field access over a payload; a short read sets ok() false.
class Reader {
 public:
  Reader(const uint8_t* data, size_t size) : data_(data), size_(size) {}
  uint8_t u8() { return uint8_t(take(1)); }
  uint16_t u16() { return uint16_t(take(2)); }
  uint32_t u32() { return uint32_t(take(4)); }
  uint64_t u64() { return take(8); }
  const uint8_t* rest() const { return data_ + position_; }
  size_t remaining() const { return ok_ ? size_ - position_ : 0; }
  bool ok() const { return ok_; }
  // True when the payload held exactly the fields read.
  bool done() const { return ok_ && position_ == size_; }

 private:
  uint64_t take(unsigned bytes) {
    if (!ok_ || size_ - position_ < bytes) {
      ok_ = false;
      return 0;
    }
    uint64_t value = 0;
    for (unsigned i = 0; i < bytes; ++i) value |= uint64_t(data_[position_ + i]) << (8 * i);
    position_ += bytes;
    return value;
  }
  const uint8_t* data_;
  size_t size_;
  size_t position_ = 0;
  bool ok_ = true;
};

class Writer {
 public:
  Writer(uint8_t* out, size_t capacity) : out_(out), capacity_(capacity) {}
  Writer& u8(uint8_t v) { return put(v, 1); }
  Writer& u16(uint16_t v) { return put(v, 2); }
  Writer& u32(uint32_t v) { return put(v, 4); }
  Writer& u64(uint64_t v) { return put(v, 8); }
  Writer& bytes(const uint8_t* data, size_t size) {
    if (!ok_ || capacity_ - size_ < size) {
      ok_ = false;
      return *this;
    }
    __builtin_memcpy(out_ + size_, data, size);
    size_ += size;
    return *this;
  }
  size_t size() const { return size_; }
  bool ok() const { return ok_; }

 private:
  Writer& put(uint64_t value, unsigned bytes) {
    if (!ok_ || capacity_ - size_ < bytes) {
      ok_ = false;
      return *this;
    }
    frame::put_le(out_ + size_, value, bytes);
    size_ += bytes;
    return *this;
  }
  uint8_t* out_;
  size_t capacity_;
  size_t size_ = 0;
  bool ok_ = true;
};

// Fixed sizes of the request payloads (data-carrying requests: the part before the data).
constexpr uint32_t kOpenBytes = 8;
constexpr uint32_t kHypercallBytes = 4 + 4 + 5 * 8;
constexpr uint32_t kBufferAllocBytes = 8;
constexpr uint32_t kBufferFreeBytes = 12;
constexpr uint32_t kBufferWriteHeaderBytes = 12;
constexpr uint32_t kBufferReadBytes = 16;
constexpr uint32_t kForeignReadBytes = 24;
constexpr uint32_t kForeignWriteHeaderBytes = 20;
constexpr uint32_t kPortRequestBytes = 8;  // bind_virq, notify, unmask, close, shutdown
constexpr uint32_t kBindInterdomainBytes = 12;
constexpr uint32_t kForeignMapBytes = 16;
constexpr uint32_t kForeignUnmapBytes = 8;
constexpr uint32_t kMappedReadBytes = 16;
constexpr uint32_t kMappedWriteHeaderBytes = 12;
constexpr uint32_t kErrorBytes = 20;

}  // namespace relay
