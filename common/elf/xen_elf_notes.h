#pragma once
// The Xen ELF notes of a PV kernel (name "Xen", types from <xen/elfnote.h>) and what the
// domain builder derives from them, following Xen's libelf rules: notes come from PT_NOTE
// segments, or from SHT_NOTE sections if no segment holds any; VIRT_BASE and PADDR_OFFSET
// default to 0; ENTRY defaults to e_entry; the kernel's virtual range is its physical extent
// shifted by VIRT_BASE - PADDR_OFFSET.

#include <stddef.h>
#include <stdint.h>

#include <xen/elfnote.h>
#include <xen/features.h>

#include "common/byte_span.h"
#include "common/elf/elf_image.h"

namespace boot {

enum class XenNoteError : uint8_t {
  none,
  malformed_note,
  no_xen_notes,
  numeric_note_bad_size,
  unknown_required_feature,
  required_feature_unsupported,
  bsd_symtab_unsupported,
  wrong_loader,
  wrong_xen_version,
  paddr_offset_without_virt_base,
  kernel_range_invalid,
  virt_base_above_kernel,
  entry_outside_image,
  hypercall_page_outside_image,
  p2m_base_inside_image,
  not_dom0_capable,
};

const char* describe(XenNoteError error);

// A set of XENFEAT_* bits (features.h numbering), XENFEAT_NR_SUBMAPS words of 32 bits.
class XenFeatures {
 public:
  static constexpr unsigned bit_count = XENFEAT_NR_SUBMAPS * 32;

  constexpr XenFeatures() = default;
  template <typename... Bits>
  static constexpr XenFeatures of(Bits... bits) {
    XenFeatures set;
    (set.add(unsigned(bits)), ...);
    return set;
  }

  constexpr bool has(unsigned bit) const { return bit < bit_count && (words_[bit / 32] >> (bit % 32)) & 1; }
  constexpr void add(unsigned bit) {
    if (bit < bit_count) words_[bit / 32] |= uint32_t(1) << (bit % 32);
  }
  constexpr void add_word(unsigned index, uint32_t bits) {
    if (index < XENFEAT_NR_SUBMAPS) words_[index] |= bits;
  }
  constexpr uint32_t word(unsigned index) const { return index < XENFEAT_NR_SUBMAPS ? words_[index] : 0; }
  // The lowest bit in this set missing from `other`, or bit_count if none.
  constexpr unsigned first_missing_from(const XenFeatures& other) const {
    for (unsigned bit = 0; bit < bit_count; ++bit)
      if (has(bit) && !other.has(bit)) return bit;
    return bit_count;
  }
  constexpr bool operator==(const XenFeatures&) const = default;

 private:
  uint32_t words_[XENFEAT_NR_SUBMAPS] = {};
};

// The feature names Xen's FEATURES note parser knows, or nullptr for other bits.
const char* xen_feature_name(unsigned bit);

// Parses a FEATURES string ("a|!b|c"): every known name is supported, "!" marks it required.
// Unknown names are ignored unless required (Xen refuses those).
XenNoteError parse_xen_feature_string(ByteSpan text, XenFeatures& supported, XenFeatures& required);

enum class PaeMode : uint8_t { none, extended_cr3, bimodal };

// A note string copied out of the image, truncated to fit, always NUL-terminated.
struct NoteString {
  static constexpr size_t capacity = 64;
  char text[capacity] = {};

  constexpr bool empty() const { return text[0] == 0; }
  constexpr bool starts_with(const char* prefix) const {
    for (size_t i = 0; prefix[i] != 0; ++i)
      if (i >= capacity || text[i] != prefix[i]) return false;
    return true;
  }
};

// The owner name and type of our note saying the kernel reads unhooked L2 entries (empty desc).
inline constexpr const char* kPvhvNoteName = "PVHV";
inline constexpr uint32_t kPvhvNoteReadsUnhookedEntries = 1;

struct XenKernelInfo {
  uint64_t virt_base = 0;
  uint64_t paddr_offset = 0;
  uint64_t entry = 0;
  bool entry_from_note = false;  // false: e_entry was used, as Xen does
  bool has_hypercall_page = false;
  uint64_t hypercall_page = 0;
  bool has_hv_start_low = false;
  uint64_t hv_start_low = 0;
  bool has_init_p2m = false;  // INIT_P2M: the p2m list lives at init_p2m_base
  uint64_t init_p2m_base = 0;
  bool unmapped_initrd = false;  // MOD_START_PFN != 0
  bool suspend_cancel = false;
  bool has_supported_features_note = false;
  PaeMode pae = PaeMode::none;
  XenFeatures supported_features;  // what the kernel can use (FEATURES + numeric note)
  XenFeatures required_features;   // "!"-marked in FEATURES
  uint64_t virt_kstart = 0;        // where the lowest loadable byte goes
  uint64_t virt_kend = 0;          // one past the highest loadable byte
  NoteString guest_os, guest_version, xen_version, loader;
  // Ours, not Xen's (a "PVHV" note, which Xen's libelf skips as it skips every note not
  // named "Xen"): the kernel reads upper-level page-table entries for none, not present, so
  // writable pagetables may unhook its L1s (ptwr/writable_pagetables.h).
  bool reads_unhooked_entries = false;

  constexpr uint64_t virt_offset() const { return virt_base - paddr_offset; }
  // The guest virtual address a loadable segment is copied to.
  constexpr uint64_t destination_of(const ElfSegment& segment) const {
    return segment.physical_address + virt_offset();
  }
};

// Parses and checks the Xen notes of an already validated image. `hypervisor_features` is what
// this hypervisor offers; a kernel requiring anything else is refused. `out` is always written
// with what was understood, so a caller can print details (e.g. the unsupported feature).
XenNoteError parse_xen_kernel(const ElfImage& image, const XenFeatures& hypervisor_features, XenKernelInfo& out);

// Xen's extra rule for the initial domain: a kernel that lists its supported features
// numerically must list XENFEAT_dom0.
XenNoteError check_dom0_capable(const XenKernelInfo& info);

}  // namespace boot
