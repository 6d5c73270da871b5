// The t_info area of Xen's public trace.h, both ways: how the hypervisor lays it out for a
// number of CPUs (the writer, tracing/control) and how a reader finds one CPU's list of buffer
// frames in it (dom0's capture, pvhvd). Pure and freestanding, unit-tested on the host.
//
// The layout, as Xen's tools expect it: a uint16 tbuf_size (pages per CPU), one uint16
// mfn_offset per possible CPU (Xen's nr_cpu_ids), padded to a 32-bit word; then, per CPU that
// has a buffer, `tbuf_size` uint32 frame numbers starting at word mfn_offset[cpu] (CPU c's list
// at first_offset + c * tbuf_size, as Xen places them). A CPU without a buffer has offset 0.
// The area is t_info_pages contiguous frames (get_info's size is t_info_pages * 4096).
#pragma once
#include <stddef.h>
#include <stdint.h>

namespace trace::t_info_layout {
constexpr uint32_t kPageBytes = 4096;
// mfn_offset is 16 bits: every CPU's list must start below 2^16 words; tbuf_size is 16 bits too.
constexpr uint32_t kMostOffset = 0xffff;

// Words before the first list: tbuf_size and `cpus` offsets, rounded up to a word.
constexpr uint32_t first_offset(uint32_t cpus) { return (2 + 2 * cpus + 3) / 4; }

// Xen's bound on pages per CPU for `cpus` possible CPUs: the 16-bit tbuf_size, and every CPU's
// list starting at a 16-bit offset (65535 / cpus, Xen's rule, which leaves room for the header).
// A request above it is reduced to it (with a message, as Xen prints).
constexpr uint32_t most_pages(uint32_t cpus) {
  if (cpus == 0) cpus = 1;
  return kMostOffset / cpus;
}

// Where CPU `cpu`'s frame list starts, in words from the start of t_info.
constexpr uint32_t list_offset(uint32_t cpus, uint32_t pages, uint32_t cpu) { return first_offset(cpus) + cpu * pages; }

// Pages the area takes: the header and a list for every possible CPU.
constexpr uint32_t info_pages(uint32_t cpus, uint32_t pages) {
  uint64_t bytes = (uint64_t(first_offset(cpus)) + uint64_t(cpus) * pages) * 4;
  return uint32_t((bytes + kPageBytes - 1) / kPageBytes);
}

// A reader's view of a copy of the area (`bytes` long, as read from get_info's frames): the
// pages per CPU, and CPU `cpu`'s frame list, or nullptr when the CPU has no buffer (offset 0,
// or beyond what the header holds) or its list lies past the end of the copy (a hostile or
// torn t_info: never read past it).
struct Reader {
  const uint8_t* area;
  size_t bytes;

  uint16_t pages() const { return bytes >= 2 ? uint16_t(area[0] | (area[1] << 8)) : 0; }
  uint16_t offset(uint32_t cpu) const {
    size_t at = 2 + 2 * size_t(cpu);
    return at + 2 <= bytes ? uint16_t(area[at] | (area[at + 1] << 8)) : 0;
  }
  // The list's frames are uint32 words; `frame(list, i)` reads one without alignment concerns.
  const uint8_t* list(uint32_t cpu) const {
    uint16_t words = offset(cpu);
    if (words == 0 || pages() == 0) return nullptr;
    // The list must start after the offsets that name it (else it overlaps the header).
    if (size_t(words) * 4 < 2 + 2 * (size_t(cpu) + 1)) return nullptr;
    if (size_t(words) * 4 + size_t(pages()) * 4 > bytes) return nullptr;
    return area + size_t(words) * 4;
  }
  static uint32_t frame(const uint8_t* list, uint32_t i) {
    const uint8_t* p = list + size_t(i) * 4;
    return uint32_t(p[0]) | (uint32_t(p[1]) << 8) | (uint32_t(p[2]) << 16) | (uint32_t(p[3]) << 24);
  }
};
}  // namespace trace::t_info_layout
