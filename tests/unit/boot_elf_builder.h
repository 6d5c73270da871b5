#pragma once
// Test-only builder of ELF64 images with notes, for the boot parser tests. Layout: file header,
// program headers, section headers, then each segment's and section's bytes (8-aligned).

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include <xen/elfnote.h>

namespace boot_test {

using Bytes = std::vector<uint8_t>;

inline void put(Bytes& bytes, size_t offset, uint64_t value, unsigned width) {
  if (bytes.size() < offset + width) bytes.resize(offset + width);
  for (unsigned i = 0; i < width; ++i) bytes[offset + i] = uint8_t(value >> (8 * i));
}

inline Bytes u32_desc(uint32_t value) {
  Bytes b;
  put(b, 0, value, 4);
  return b;
}
inline Bytes u64_desc(uint64_t value) {
  Bytes b;
  put(b, 0, value, 8);
  return b;
}
inline Bytes str_desc(const std::string& text) {
  Bytes b(text.begin(), text.end());
  b.push_back(0);
  return b;
}

// One note record, padded to `align` (4 or 8) after the name and after the descriptor.
inline Bytes note(const std::string& name, uint32_t type, const Bytes& desc, unsigned align = 4) {
  Bytes b;
  put(b, 0, name.size() + 1, 4);
  put(b, 4, desc.size(), 4);
  put(b, 8, type, 4);
  b.insert(b.end(), name.begin(), name.end());
  b.push_back(0);
  while (b.size() % align) b.push_back(0);
  b.insert(b.end(), desc.begin(), desc.end());
  while (b.size() % align) b.push_back(0);
  return b;
}

inline Bytes concat(std::initializer_list<Bytes> parts) {
  Bytes all;
  for (const Bytes& part : parts) all.insert(all.end(), part.begin(), part.end());
  return all;
}

struct Segment {
  uint32_t type = 1;   // PT_LOAD
  uint32_t flags = 5;  // R+X
  uint64_t vaddr = 0;
  uint64_t paddr = 0;
  uint64_t memsz = 0;  // 0: same as data size
  uint64_t align = 4096;
  Bytes data;
};

struct Section {
  uint32_t type = 7;  // SHT_NOTE
  uint64_t align = 4;
  Bytes data;
};

struct ElfBuilder {
  uint64_t entry = 0;
  uint16_t machine = 62;
  uint16_t type = 2;
  std::vector<Segment> segments;
  std::vector<Section> sections;  // a null section 0 is added in front

  // File offsets of each segment's / section's data after build().
  std::vector<uint64_t> segment_offsets, section_offsets;
  static constexpr uint64_t phoff = 64;
  uint64_t shoff = 0;

  Bytes build() {
    Bytes image(64, 0);
    const uint8_t ident[] = {0x7f, 'E', 'L', 'F', 2, 1, 1};
    std::memcpy(image.data(), ident, sizeof(ident));
    put(image, 16, type, 2);
    put(image, 18, machine, 2);
    put(image, 20, 1, 4);
    put(image, 24, entry, 8);
    put(image, 32, segments.empty() ? 0 : phoff, 8);
    put(image, 52, 64, 2);
    put(image, 54, 56, 2);
    put(image, 56, segments.size(), 2);
    size_t section_count = sections.empty() ? 0 : sections.size() + 1;
    shoff = phoff + 56 * segments.size();
    put(image, 40, section_count ? shoff : 0, 8);
    put(image, 58, 64, 2);
    put(image, 60, section_count, 2);
    uint64_t data_offset = shoff + 64 * section_count;
    image.resize(data_offset, 0);
    segment_offsets.clear();
    for (size_t i = 0; i < segments.size(); ++i) {
      const Segment& s = segments[i];
      uint64_t offset = append(image, s.data);
      segment_offsets.push_back(offset);
      uint64_t base = phoff + 56 * i;
      put(image, base + 0, s.type, 4);
      put(image, base + 4, s.flags, 4);
      put(image, base + 8, offset, 8);
      put(image, base + 16, s.vaddr, 8);
      put(image, base + 24, s.paddr, 8);
      put(image, base + 32, s.data.size(), 8);
      put(image, base + 40, s.memsz ? s.memsz : s.data.size(), 8);
      put(image, base + 48, s.align, 8);
    }
    section_offsets.clear();
    for (size_t i = 0; i < sections.size(); ++i) {
      const Section& s = sections[i];
      uint64_t offset = append(image, s.data);
      section_offsets.push_back(offset);
      uint64_t base = shoff + 64 * (i + 1);
      put(image, base + 4, s.type, 4);
      put(image, base + 24, offset, 8);
      put(image, base + 32, s.data.size(), 8);
      put(image, base + 48, s.align, 8);
    }
    return image;
  }

  uint64_t phdr(size_t index) const { return phoff + 56 * index; }
  uint64_t shdr(size_t index) const { return shoff + 64 * (index + 1); }

 private:
  static uint64_t append(Bytes& image, const Bytes& data) {
    while (image.size() % 8) image.push_back(0);
    uint64_t offset = image.size();
    image.insert(image.end(), data.begin(), data.end());
    return offset;
  }
};

// A Linux-like 64-bit PV kernel: 2 MiB text at paddr 16 MiB with VIRT_BASE -2 GiB.
constexpr uint64_t linux_virt_base = 0xffffffff80000000ull;
constexpr uint64_t linux_paddr = 0x1000000;
constexpr uint64_t linux_kstart = linux_virt_base + linux_paddr;

inline Bytes linux_notes(uint64_t entry, uint64_t hypercall_page) {
  return concat({
      note("Xen", XEN_ELFNOTE_GUEST_OS, str_desc("linux")),
      note("Xen", XEN_ELFNOTE_GUEST_VERSION, str_desc("2.6")),
      note("Xen", XEN_ELFNOTE_XEN_VERSION, str_desc("xen-3.0")),
      note("Xen", XEN_ELFNOTE_VIRT_BASE, u64_desc(linux_virt_base)),
      note("Xen", XEN_ELFNOTE_PADDR_OFFSET, u64_desc(0)),
      note("Xen", XEN_ELFNOTE_ENTRY, u64_desc(entry)),
      note("Xen", XEN_ELFNOTE_HYPERCALL_PAGE, u64_desc(hypercall_page)),
      note("Xen", XEN_ELFNOTE_FEATURES, str_desc("!writable_page_tables|pae_pgdir_above_4gb")),
      note("Xen", XEN_ELFNOTE_PAE_MODE, str_desc("yes")),
      note("Xen", XEN_ELFNOTE_LOADER, str_desc("generic")),
      note("Xen", XEN_ELFNOTE_SUSPEND_CANCEL, u32_desc(1)),
  });
}

inline ElfBuilder linux_like_kernel(const Bytes& notes, uint64_t text_size = 0x200000) {
  ElfBuilder builder;
  builder.entry = linux_kstart + 0x1000;
  Segment text;
  text.vaddr = linux_kstart;
  text.paddr = linux_paddr;
  text.data = Bytes(64, 0x90);
  text.memsz = text_size;
  builder.segments.push_back(text);
  Segment notes_segment;
  notes_segment.type = 4;  // PT_NOTE
  notes_segment.flags = 4;
  notes_segment.align = 4;
  notes_segment.data = notes;
  builder.segments.push_back(notes_segment);
  return builder;
}

}  // namespace boot_test
