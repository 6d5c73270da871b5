// A kernel file as a builder is given it: an ELF image with Xen notes as is, or a Linux
// bzImage, whose payload (the compressed vmlinux ELF) the x86 boot protocol's setup header
// locates and which is decompressed here (gzip through zlib, xz through liblzma: Debian's
// kernels are xz with the x86 BCJ filter, which the xz container names itself), as Xen's
// libxenguest does before it parses the ELF. Every value of the file is checked before use
// and the output is bounded, so a hostile image is an error, never a crash or a memory bomb.
#pragma once
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace pvhv::xenguest {

enum class KernelImageError {
  none,
  not_kernel,           // neither ELF nor a bzImage (no boot flag and 'HdrS' setup header)
  old_protocol,         // boot protocol before 2.08: no payload fields
  payload_outside,      // payload_offset / payload_length point outside the file
  unknown_compression,  // a payload neither gzip nor xz
  corrupt_payload,      // the decompressor refused it, or it ends early
  too_large,            // it decompresses to more than the limit
  not_elf,              // it decompresses to something that is not ELF
};
const char* describe(KernelImageError error);

// Where a bzImage's payload lies in the file (pure: the setup header's rules only).
struct BzImagePayload {
  uint16_t protocol = 0;  // boot protocol version, e.g. 0x020f
  size_t offset = 0;      // of the payload's first byte in the file
  size_t length = 0;
};

inline constexpr size_t kKernelImageLimit = size_t(512) << 20;

bool is_elf(std::span<const uint8_t> file);
KernelImageError find_bzimage_payload(std::span<const uint8_t> file, BzImagePayload& payload);

// The kernel's ELF image: `file` itself when it is ELF (`elf` left empty, `is_elf` true), or
// the bzImage payload decompressed into `elf`, at most `limit` bytes.
KernelImageError unpack_kernel(std::span<const uint8_t> file, std::vector<uint8_t>& elf,
                               size_t limit = kKernelImageLimit);

}  // namespace pvhv::xenguest
