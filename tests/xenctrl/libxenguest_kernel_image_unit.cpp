// The builder's kernel files: Debian's own bzImage (linux-image-*-amd64, fetched by
// scripts/install-deps.sh into build/deps/linux) unpacks to a vmlinux with Xen notes; the same
// vmlinux recompressed with gzip unpacks alike; hostile images are errors, never crashes.
#include <gtest/gtest.h>
#include <zlib.h>

#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>
#include <vector>

#include "common/elf/elf_image.h"
#include "common/elf/xen_elf_notes.h"
#include "tools/libxenguest/kernel_image.h"

using namespace pvhv::xenguest;

namespace {
std::vector<uint8_t> read_file(const char* path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

const std::vector<uint8_t>& debian_bzimage() {
  static const std::vector<uint8_t> image = read_file(PVHV_DEBIAN_VMLINUZ);
  return image;
}

void put32(std::vector<uint8_t>& file, size_t offset, uint32_t value) {
  for (int i = 0; i < 4; ++i) file[offset + i] = uint8_t(value >> (8 * i));
}

BzImagePayload payload_of(const std::vector<uint8_t>& file) {
  BzImagePayload payload;
  EXPECT_EQ(find_bzimage_payload(file, payload), KernelImageError::none);
  return payload;
}

// The Debian image with its payload replaced by `payload` (header fields adjusted).
std::vector<uint8_t> with_payload(const std::vector<uint8_t>& payload) {
  const std::vector<uint8_t>& original = debian_bzimage();
  BzImagePayload where = payload_of(original);
  std::vector<uint8_t> file(original.begin(), original.begin() + long(where.offset));
  file.insert(file.end(), payload.begin(), payload.end());
  put32(file, 0x24c, uint32_t(payload.size()));
  return file;
}

std::vector<uint8_t> gzip(const std::vector<uint8_t>& data) {
  z_stream z{};
  EXPECT_EQ(deflateInit2(&z, Z_BEST_SPEED, Z_DEFLATED, 16 + MAX_WBITS, 8, Z_DEFAULT_STRATEGY), Z_OK);
  std::vector<uint8_t> out(deflateBound(&z, uLong(data.size())));
  z.next_in = const_cast<Bytef*>(data.data());
  z.avail_in = uInt(data.size());
  z.next_out = out.data();
  z.avail_out = uInt(out.size());
  EXPECT_EQ(deflate(&z, Z_FINISH), Z_STREAM_END);
  out.resize(z.total_out);
  deflateEnd(&z);
  return out;
}

const std::vector<uint8_t>& debian_vmlinux() {
  static const std::vector<uint8_t> elf = [] {
    std::vector<uint8_t> out;
    EXPECT_EQ(unpack_kernel(debian_bzimage(), out), KernelImageError::none);
    return out;
  }();
  return elf;
}
}  // namespace

TEST(KernelImage, DebianBzImageIsXzAndUnpacksToAXenPvVmlinux) {
  ASSERT_GT(debian_bzimage().size(), 1u << 20) << "missing " << PVHV_DEBIAN_VMLINUZ << " (make deps)";
  BzImagePayload payload = payload_of(debian_bzimage());
  EXPECT_GE(payload.protocol, 0x0208);
  EXPECT_EQ(std::memcmp(debian_bzimage().data() + payload.offset,
                        "\xfd"
                        "7zXZ",
                        5),
            0);
  const std::vector<uint8_t>& elf = debian_vmlinux();
  ASSERT_TRUE(is_elf(elf));
  EXPECT_GT(elf.size(), debian_bzimage().size());  // the payload really was decompressed
  boot::ElfImage image;
  ASSERT_EQ(boot::ElfImage::parse(boot::ByteSpan(elf.data(), elf.size()), image), boot::ElfError::none);
  boot::XenFeatures every;
  for (unsigned bit = 0; bit < boot::XenFeatures::bit_count; ++bit) every.add(bit);
  boot::XenKernelInfo info;
  ASSERT_EQ(boot::parse_xen_kernel(image, every, info), boot::XenNoteError::none);
  EXPECT_TRUE(info.guest_os.starts_with("linux"));
  EXPECT_EQ(info.virt_base, 0xffffffff80000000ull);
  EXPECT_TRUE(info.entry >= info.virt_kstart && info.entry < info.virt_kend);
  EXPECT_TRUE(info.has_init_p2m);  // Linux's p2m list goes outside the initial mapping
  std::printf("vmlinux: %zu bytes, entry %#llx, kernel %#llx-%#llx, hypercall page %s, INIT_P2M %#llx\n", elf.size(),
              (unsigned long long)info.entry, (unsigned long long)info.virt_kstart, (unsigned long long)info.virt_kend,
              info.has_hypercall_page ? "yes" : "no", (unsigned long long)info.init_p2m_base);
}

TEST(KernelImage, AnElfImageIsTakenAsItIs) {
  std::vector<uint8_t> out{1, 2, 3};
  EXPECT_EQ(unpack_kernel(debian_vmlinux(), out), KernelImageError::none);
  EXPECT_TRUE(out.empty());
}

TEST(KernelImage, AGzipPayloadUnpacksToTheSameVmlinux) {
  std::vector<uint8_t> out;
  ASSERT_EQ(unpack_kernel(with_payload(gzip(debian_vmlinux())), out), KernelImageError::none);
  EXPECT_EQ(out, debian_vmlinux());
}

TEST(KernelImage, OutputIsBoundedByTheLimit) {
  std::vector<uint8_t> out;
  EXPECT_EQ(unpack_kernel(debian_bzimage(), out, 1 << 20), KernelImageError::too_large);
  EXPECT_TRUE(out.empty());
  // A gzip bomb: 256 MiB of zeroes in a few hundred KiB.
  std::vector<uint8_t> zeroes(size_t(256) << 20, 0);
  std::vector<uint8_t> bomb = with_payload(gzip(zeroes));
  zeroes.clear();
  zeroes.shrink_to_fit();
  EXPECT_EQ(unpack_kernel(bomb, out, 16 << 20), KernelImageError::too_large);
}

TEST(KernelImage, TruncatedOrDamagedPayloadsAreRefused) {
  const std::vector<uint8_t>& file = debian_bzimage();
  BzImagePayload payload = payload_of(file);
  std::vector<uint8_t> out;
  std::vector<uint8_t> truncated(file.begin(), file.begin() + long(payload.offset + payload.length / 2));
  EXPECT_EQ(unpack_kernel(truncated, out), KernelImageError::payload_outside);
  put32(truncated, 0x24c, uint32_t(payload.length / 2));  // the header agrees, the xz stream ends early
  EXPECT_EQ(unpack_kernel(truncated, out), KernelImageError::corrupt_payload);
  std::vector<uint8_t> damaged = file;
  for (size_t i = 0; i < 64; ++i) damaged[payload.offset + payload.length / 2 + i] ^= 0x5a;
  EXPECT_EQ(unpack_kernel(damaged, out), KernelImageError::corrupt_payload);
  std::vector<uint8_t> gz = gzip(debian_vmlinux());
  gz.resize(gz.size() / 3);
  EXPECT_EQ(unpack_kernel(with_payload(gz), out), KernelImageError::corrupt_payload);
  EXPECT_TRUE(out.empty());
}

TEST(KernelImage, PayloadsThatAreNotAKernelAreRefused) {
  std::vector<uint8_t> out;
  std::vector<uint8_t> lz4{0x02, 0x21, 0x4c, 0x18, 0, 0, 0, 0};
  EXPECT_EQ(unpack_kernel(with_payload(lz4), out), KernelImageError::unknown_compression);
  std::vector<uint8_t> text(100000, 'x');
  EXPECT_EQ(unpack_kernel(with_payload(gzip(text)), out), KernelImageError::not_elf);
  EXPECT_EQ(unpack_kernel(with_payload({}), out), KernelImageError::payload_outside);
}

TEST(KernelImage, SetupHeadersThatLieAreRefused) {
  std::vector<uint8_t> out;
  EXPECT_EQ(unpack_kernel(std::vector<uint8_t>{}, out), KernelImageError::not_kernel);
  EXPECT_EQ(unpack_kernel(std::vector<uint8_t>(0x250, 0), out), KernelImageError::not_kernel);
  std::vector<uint8_t> header(debian_bzimage().begin(), debian_bzimage().begin() + 0x250);
  EXPECT_EQ(unpack_kernel(header, out), KernelImageError::payload_outside);
  std::vector<uint8_t> file = debian_bzimage();
  file[0x206] = 0x07;  // protocol 2.07
  EXPECT_EQ(unpack_kernel(file, out), KernelImageError::old_protocol);
  file = debian_bzimage();
  put32(file, 0x248, 0xfffffff0u);  // payload_offset far past the end
  EXPECT_EQ(unpack_kernel(file, out), KernelImageError::payload_outside);
  file = debian_bzimage();
  put32(file, 0x24c, 0xffffffffu);  // payload_length past the end, offset + length wraps in 32 bits
  EXPECT_EQ(unpack_kernel(file, out), KernelImageError::payload_outside);
  file = debian_bzimage();
  file[0x1f1] = 0xff;  // setup_sects beyond the file's setup code: the payload moves out of place
  EXPECT_NE(unpack_kernel(file, out), KernelImageError::none);
  file.resize(0x24f);  // the header's last field cut off
  EXPECT_EQ(unpack_kernel(file, out), KernelImageError::not_kernel);
}
