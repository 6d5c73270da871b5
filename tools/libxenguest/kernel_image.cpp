// A bzImage's payload decompressed: gzip through zlib, xz through liblzma, the output bounded
// by the caller's limit (a payload that would grow past it stops there: too_large).
#include <lzma.h>
#include <zlib.h>

#include "tools/libxenguest/kernel_image.h"

namespace pvhv::xenguest {
namespace {
constexpr size_t kChunk = size_t(1) << 20;

bool starts_with(std::span<const uint8_t> bytes, std::initializer_list<uint8_t> magic) {
  if (bytes.size() < magic.size()) return false;
  size_t i = 0;
  for (uint8_t m : magic)
    if (bytes[i++] != m) return false;
  return true;
}

// Grows `out` by a chunk (never beyond `limit`); false when the limit is reached.
bool grow(std::vector<uint8_t>& out, size_t used, size_t limit) {
  if (used >= limit) return false;
  out.resize(std::min(limit, used + kChunk));
  return true;
}

KernelImageError gunzip(std::span<const uint8_t> in, std::vector<uint8_t>& out, size_t limit) {
  z_stream z{};
  if (inflateInit2(&z, 16 + MAX_WBITS) != Z_OK) return KernelImageError::corrupt_payload;
  z.next_in = const_cast<Bytef*>(in.data());
  z.avail_in = uInt(in.size());
  size_t used = 0;
  KernelImageError result = KernelImageError::corrupt_payload;
  for (;;) {
    if (used == out.size() && !grow(out, used, limit)) {
      result = KernelImageError::too_large;
      break;
    }
    z.next_out = out.data() + used;
    z.avail_out = uInt(out.size() - used);
    int rc = inflate(&z, Z_NO_FLUSH);
    used = out.size() - z.avail_out;
    if (rc == Z_STREAM_END) {
      result = KernelImageError::none;
      break;
    }
    if (rc != Z_OK || (z.avail_in == 0 && z.avail_out != 0)) break;  // an error, or input ended early
  }
  inflateEnd(&z);
  out.resize(used);
  return result;
}

KernelImageError unxz(std::span<const uint8_t> in, std::vector<uint8_t>& out, size_t limit) {
  lzma_stream s = LZMA_STREAM_INIT;
  if (lzma_stream_decoder(&s, UINT64_MAX, 0) != LZMA_OK) return KernelImageError::corrupt_payload;
  s.next_in = in.data();
  s.avail_in = in.size();
  size_t used = 0;
  KernelImageError result = KernelImageError::corrupt_payload;
  for (;;) {
    if (used == out.size() && !grow(out, used, limit)) {
      result = KernelImageError::too_large;
      break;
    }
    s.next_out = out.data() + used;
    s.avail_out = out.size() - used;
    // LZMA_FINISH: all the input is there; an xz stream that ends early is LZMA_BUF_ERROR.
    lzma_ret rc = lzma_code(&s, LZMA_FINISH);
    used = out.size() - s.avail_out;
    if (rc == LZMA_STREAM_END) {
      result = KernelImageError::none;
      break;
    }
    if (rc != LZMA_OK) break;
  }
  lzma_end(&s);
  out.resize(used);
  return result;
}
}  // namespace

KernelImageError unpack_kernel(std::span<const uint8_t> file, std::vector<uint8_t>& elf, size_t limit) {
  elf.clear();
  if (is_elf(file)) return KernelImageError::none;
  BzImagePayload payload;
  if (KernelImageError e = find_bzimage_payload(file, payload); e != KernelImageError::none) return e;
  std::span<const uint8_t> compressed = file.subspan(payload.offset, payload.length);
  KernelImageError e = KernelImageError::unknown_compression;
  if (starts_with(compressed, {0x1f, 0x8b}))
    e = gunzip(compressed, elf, limit);
  else if (starts_with(compressed, {0xfd, '7', 'z', 'X', 'Z', 0x00}))
    e = unxz(compressed, elf, limit);
  if (e == KernelImageError::none && !is_elf(elf)) e = KernelImageError::not_elf;
  if (e != KernelImageError::none) elf.clear();
  return e;
}

}  // namespace pvhv::xenguest
