// The setup header of Linux's x86 boot protocol (Documentation/arch/x86/boot.rst), as much
// of it as finding the payload needs: boot flag 0xaa55 at 0x1fe, "HdrS" at 0x202, the
// protocol version at 0x206, setup_sects at 0x1f1 (0 meaning 4), payload_offset and
// payload_length at 0x248 / 0x24c (from 2.08 on), relative to the protected-mode code that
// follows the boot sector and the setup sectors.
#include <cstring>

#include "tools/libxenguest/kernel_image.h"

namespace pvhv::xenguest {
namespace {
constexpr size_t kSetupSects = 0x1f1;
constexpr size_t kBootFlag = 0x1fe;
constexpr size_t kHeaderMagic = 0x202;
constexpr size_t kProtocol = 0x206;
constexpr size_t kPayloadOffset = 0x248;
constexpr size_t kPayloadLength = 0x24c;
constexpr size_t kHeaderEnd = kPayloadLength + 4;
constexpr uint16_t kMinProtocol = 0x0208;
constexpr size_t kSector = 512;

uint32_t le(std::span<const uint8_t> file, size_t offset, size_t bytes) {
  uint32_t value = 0;
  for (size_t i = 0; i < bytes; ++i) value |= uint32_t(file[offset + i]) << (8 * i);
  return value;
}
}  // namespace

bool is_elf(std::span<const uint8_t> file) {
  return file.size() >= 4 && file[0] == 0x7f && file[1] == 'E' && file[2] == 'L' && file[3] == 'F';
}

KernelImageError find_bzimage_payload(std::span<const uint8_t> file, BzImagePayload& payload) {
  if (file.size() < kHeaderEnd || le(file, kBootFlag, 2) != 0xaa55 ||
      std::memcmp(file.data() + kHeaderMagic, "HdrS", 4) != 0)
    return KernelImageError::not_kernel;
  payload.protocol = uint16_t(le(file, kProtocol, 2));
  if (payload.protocol < kMinProtocol) return KernelImageError::old_protocol;
  const size_t setup_sects = file[kSetupSects] ? file[kSetupSects] : 4;
  const uint64_t code = uint64_t(setup_sects + 1) * kSector;
  const uint64_t start = code + le(file, kPayloadOffset, 4);
  const uint64_t length = le(file, kPayloadLength, 4);
  if (length == 0 || start > file.size() || length > file.size() - start) return KernelImageError::payload_outside;
  payload.offset = size_t(start);
  payload.length = size_t(length);
  return KernelImageError::none;
}

const char* describe(KernelImageError error) {
  switch (error) {
    case KernelImageError::none: return "ok";
    case KernelImageError::not_kernel: return "neither an ELF image nor a bzImage";
    case KernelImageError::old_protocol: return "a bzImage of boot protocol before 2.08 (no payload fields)";
    case KernelImageError::payload_outside: return "the bzImage's payload lies outside the file";
    case KernelImageError::unknown_compression: return "the bzImage's payload is neither gzip nor xz";
    case KernelImageError::corrupt_payload: return "the bzImage's payload does not decompress";
    case KernelImageError::too_large: return "the bzImage's payload decompresses beyond the limit";
    case KernelImageError::not_elf: return "the bzImage's payload is not an ELF image";
  }
  return "unknown error";
}

}  // namespace pvhv::xenguest
