#include "common/elf/xen_elf_notes.h"

namespace boot {

const char* describe(XenNoteError error) {
  switch (error) {
    case XenNoteError::none: return "no error";
    case XenNoteError::malformed_note: return "malformed ELF note";
    case XenNoteError::no_xen_notes: return "not a Xen PV kernel (no Xen ELF notes)";
    case XenNoteError::numeric_note_bad_size: return "numeric Xen ELF note has a bad size";
    case XenNoteError::unknown_required_feature: return "kernel requires an unknown feature";
    case XenNoteError::required_feature_unsupported:
      return "kernel requires a feature this hypervisor does not support";
    case XenNoteError::bsd_symtab_unsupported: return "BSD_SYMTAB loading is not supported";
    case XenNoteError::wrong_loader: return "kernel is neither for the generic loader nor a Linux image";
    case XenNoteError::wrong_xen_version: return "kernel is not built for xen-3.0";
    case XenNoteError::paddr_offset_without_virt_base: return "PADDR_OFFSET set, VIRT_BASE unset";
    case XenNoteError::kernel_range_invalid: return "kernel virtual range is invalid";
    case XenNoteError::virt_base_above_kernel: return "VIRT_BASE lies above the kernel start";
    case XenNoteError::entry_outside_image: return "entry point outside the kernel image";
    case XenNoteError::hypercall_page_outside_image: return "hypercall page outside the kernel image";
    case XenNoteError::p2m_base_inside_image: return "INIT_P2M base inside the kernel image";
    case XenNoteError::not_dom0_capable: return "kernel does not support dom0 operation";
  }
  return "unknown Xen note error";
}

namespace {

constexpr uint64_t page_size = 4096;

// The names Xen 4.17's FEATURES parser recognises; other bits are settable only numerically.
struct FeatureName {
  unsigned bit;
  const char* name;
};
constexpr FeatureName feature_names[] = {
    {XENFEAT_writable_page_tables, "writable_page_tables"},
    {XENFEAT_writable_descriptor_tables, "writable_descriptor_tables"},
    {XENFEAT_auto_translated_physmap, "auto_translated_physmap"},
    {XENFEAT_supervisor_mode_kernel, "supervisor_mode_kernel"},
    {XENFEAT_pae_pgdir_above_4gb, "pae_pgdir_above_4gb"},
    {XENFEAT_hvm_callback_vector, "hvm_callback_vector"},
    {XENFEAT_dom0, "dom0"},
};

constexpr bool token_equals(ByteSpan token, const char* name) {
  uint64_t i = 0;
  for (; name[i] != 0; ++i)
    if (i >= token.size() || token.u8(i) != uint8_t(name[i])) return false;
  return i == token.size();
}

// Returns the feature bit named by `token`, or XenFeatures::bit_count if unknown.
unsigned feature_bit_named(ByteSpan token) {
  for (const FeatureName& feature : feature_names)
    if (token_equals(token, feature.name)) return feature.bit;
  return XenFeatures::bit_count;
}

XenNoteError apply_feature_token(ByteSpan token, XenFeatures& supported, XenFeatures& required) {
  bool is_required = !token.empty() && token.u8(0) == '!';
  if (is_required) token = token.sub(1, token.size() - 1);
  unsigned bit = feature_bit_named(token);
  if (bit == XenFeatures::bit_count) return is_required ? XenNoteError::unknown_required_feature : XenNoteError::none;
  supported.add(bit);
  if (is_required) required.add(bit);
  return XenNoteError::none;
}

// The string value of a note: up to its first NUL, or the whole descriptor when it has none
// (Linux's FEATURES; Xen's libelf reads on to the NUL of the note's padding, the same string).
XenNoteError note_string(const ElfNote& note, ByteSpan& text) {
  int64_t length = note.desc.c_string_length();
  text = length < 0 ? note.desc : note.desc.sub(0, uint64_t(length));
  return XenNoteError::none;
}

XenNoteError note_number(const ElfNote& note, uint64_t& value) {
  uint64_t size = note.desc.size();
  if (size != 1 && size != 2 && size != 4 && size != 8) return XenNoteError::numeric_note_bad_size;
  note.desc.read_le(0, unsigned(size), value);
  return XenNoteError::none;
}

void copy_string(ByteSpan text, NoteString& out) {
  uint64_t length = text.size() < NoteString::capacity - 1 ? text.size() : NoteString::capacity - 1;
  for (uint64_t i = 0; i < NoteString::capacity; ++i) out.text[i] = i < length ? char(text.u8(i)) : 0;
}

constexpr bool contains_word(ByteSpan text, const char* word) {
  uint64_t length = 0;
  while (word[length] != 0) ++length;
  for (uint64_t start = 0; start + length <= text.size(); ++start)
    if (token_equals(text.sub(start, length), word)) return true;
  return false;
}

bool is_string_note(uint32_t type) {
  switch (type) {
    case XEN_ELFNOTE_XEN_VERSION:
    case XEN_ELFNOTE_GUEST_OS:
    case XEN_ELFNOTE_GUEST_VERSION:
    case XEN_ELFNOTE_LOADER:
    case XEN_ELFNOTE_PAE_MODE:
    case XEN_ELFNOTE_FEATURES:
    case XEN_ELFNOTE_BSD_SYMTAB: return true;
    default: return false;
  }
}

bool is_numeric_note(uint32_t type) {
  switch (type) {
    case XEN_ELFNOTE_ENTRY:
    case XEN_ELFNOTE_HYPERCALL_PAGE:
    case XEN_ELFNOTE_VIRT_BASE:
    case XEN_ELFNOTE_PADDR_OFFSET:
    case XEN_ELFNOTE_HV_START_LOW:
    case XEN_ELFNOTE_SUSPEND_CANCEL:
    case XEN_ELFNOTE_INIT_P2M:
    case XEN_ELFNOTE_MOD_START_PFN:
    case XEN_ELFNOTE_PHYS32_ENTRY: return true;
    default: return false;
  }
}

// What parsing has seen so far; "unset" is tracked apart from the value, as in Xen.
struct NoteState {
  XenKernelInfo& info;
  bool has_virt_base = false;
  bool has_paddr_offset = false;
  bool bsd_symtab = false;
};

XenNoteError apply_string_note(const ElfNote& note, NoteState& state) {
  ByteSpan text;
  XenNoteError error = note_string(note, text);
  if (error != XenNoteError::none) return error;
  XenKernelInfo& info = state.info;
  switch (note.type) {
    case XEN_ELFNOTE_XEN_VERSION: copy_string(text, info.xen_version); break;
    case XEN_ELFNOTE_GUEST_OS: copy_string(text, info.guest_os); break;
    case XEN_ELFNOTE_GUEST_VERSION: copy_string(text, info.guest_version); break;
    case XEN_ELFNOTE_LOADER: copy_string(text, info.loader); break;
    case XEN_ELFNOTE_PAE_MODE:
      if (token_equals(text, "yes")) info.pae = PaeMode::extended_cr3;
      if (contains_word(text, "bimodal")) info.pae = PaeMode::bimodal;
      break;
    case XEN_ELFNOTE_FEATURES: return parse_xen_feature_string(text, info.supported_features, info.required_features);
    case XEN_ELFNOTE_BSD_SYMTAB:
      if (token_equals(text, "yes")) state.bsd_symtab = true;
      break;
  }
  return XenNoteError::none;
}

XenNoteError apply_numeric_note(const ElfNote& note, NoteState& state) {
  uint64_t value = 0;
  XenNoteError error = note_number(note, value);
  if (error != XenNoteError::none) return error;
  XenKernelInfo& info = state.info;
  switch (note.type) {
    case XEN_ELFNOTE_ENTRY:
      info.entry = value;
      info.entry_from_note = true;
      break;
    case XEN_ELFNOTE_HYPERCALL_PAGE:
      info.hypercall_page = value;
      info.has_hypercall_page = true;
      break;
    case XEN_ELFNOTE_VIRT_BASE:
      info.virt_base = value;
      state.has_virt_base = true;
      break;
    case XEN_ELFNOTE_PADDR_OFFSET:
      info.paddr_offset = value;
      state.has_paddr_offset = true;
      break;
    case XEN_ELFNOTE_HV_START_LOW:
      info.hv_start_low = value;
      info.has_hv_start_low = true;
      break;
    case XEN_ELFNOTE_SUSPEND_CANCEL: info.suspend_cancel = value != 0; break;
    case XEN_ELFNOTE_INIT_P2M:
      info.init_p2m_base = value;
      info.has_init_p2m = true;
      break;
    case XEN_ELFNOTE_MOD_START_PFN: info.unmapped_initrd = value != 0; break;
  }
  return XenNoteError::none;
}

// SUPPORTED_FEATURES is an array of 32-bit feature words; Xen ignores other sizes.
void apply_supported_features_note(const ElfNote& note, XenKernelInfo& info) {
  info.has_supported_features_note = true;
  if (note.desc.size() % 4 != 0) return;
  for (unsigned word = 0; word < XENFEAT_NR_SUBMAPS && (word + 1) * 4 <= note.desc.size(); ++word)
    info.supported_features.add_word(word, note.desc.u32(word * 4));
}

XenNoteError apply_xen_note(const ElfNote& note, NoteState& state) {
  if (note.type == XEN_ELFNOTE_SUPPORTED_FEATURES) {
    apply_supported_features_note(note, state.info);
    return XenNoteError::none;
  }
  if (is_string_note(note.type)) return apply_string_note(note, state);
  if (is_numeric_note(note.type)) return apply_numeric_note(note, state);
  return XenNoteError::none;  // unknown or irrelevant (L1_MFN_VALID, INFO): ignored like Xen
}

// Parses every "Xen" note of one note area, counting them.
XenNoteError parse_note_area(ByteSpan area, uint64_t alignment, NoteState& state, unsigned& count) {
  NoteCursor cursor(area, alignment);
  ElfNote note{};
  for (;;) {
    NoteCursor::Step step = cursor.next(note);
    if (step == NoteCursor::Step::end) return XenNoteError::none;
    if (step == NoteCursor::Step::malformed) return XenNoteError::malformed_note;
    if (note.has_name(kPvhvNoteName) && note.type == kPvhvNoteReadsUnhookedEntries)
      state.info.reads_unhooked_entries = true;
    if (!note.has_name("Xen")) continue;
    ++count;
    XenNoteError error = apply_xen_note(note, state);
    if (error != XenNoteError::none) return error;
  }
}

XenNoteError parse_note_segments(const ElfImage& image, NoteState& state, unsigned& count) {
  for (uint16_t i = 0; i < image.program_header_count(); ++i) {
    ElfSegment segment = image.program_header(i);
    // Some binutils versions leave p_offset 0 in note segments; Xen skips those too.
    if (segment.type != elf::pt_note || segment.file_offset == 0) continue;
    XenNoteError error = parse_note_area(image.file_bytes(segment), segment.alignment, state, count);
    if (error != XenNoteError::none) return error;
  }
  return XenNoteError::none;
}

XenNoteError parse_note_sections(const ElfImage& image, NoteState& state, unsigned& count) {
  for (uint16_t i = 1; i < image.section_header_count(); ++i) {
    ElfSection section = image.section_header(i);
    if (section.type != elf::sht_note) continue;
    XenNoteError error = parse_note_area(image.file_bytes(section), section.alignment, state, count);
    if (error != XenNoteError::none) return error;
  }
  return XenNoteError::none;
}

XenNoteError check_identity(const XenKernelInfo& info) {
  if (!info.loader.starts_with("generic") && !info.guest_os.starts_with("linux")) return XenNoteError::wrong_loader;
  if (!info.xen_version.starts_with("xen-3.0")) return XenNoteError::wrong_xen_version;
  return XenNoteError::none;
}

XenNoteError compute_addresses(const ElfImage& image, NoteState& state) {
  XenKernelInfo& info = state.info;
  if (state.has_paddr_offset && !state.has_virt_base) return XenNoteError::paddr_offset_without_virt_base;
  if (!info.entry_from_note) info.entry = image.entry();
  info.virt_kstart = image.physical_start() + info.virt_offset();
  info.virt_kend = image.physical_end() + info.virt_offset();
  if (info.virt_kstart > info.virt_kend) return XenNoteError::kernel_range_invalid;
  if (info.virt_base > info.virt_kstart) return XenNoteError::virt_base_above_kernel;
  if (info.entry < info.virt_kstart || info.entry > info.virt_kend) return XenNoteError::entry_outside_image;
  return XenNoteError::none;
}

XenNoteError check_placements(const XenKernelInfo& info) {
  // Xen fills the whole page with stubs, so all of it must belong to the image.
  if (info.has_hypercall_page && (info.hypercall_page < info.virt_kstart || info.hypercall_page > info.virt_kend ||
                                  info.virt_kend - info.hypercall_page < page_size))
    return XenNoteError::hypercall_page_outside_image;
  if (info.has_init_p2m && info.init_p2m_base >= info.virt_kstart && info.init_p2m_base < info.virt_kend)
    return XenNoteError::p2m_base_inside_image;
  return XenNoteError::none;
}

}  // namespace

const char* xen_feature_name(unsigned bit) {
  for (const FeatureName& feature : feature_names)
    if (feature.bit == bit) return feature.name;
  return nullptr;
}

XenNoteError parse_xen_feature_string(ByteSpan text, XenFeatures& supported, XenFeatures& required) {
  uint64_t start = 0;
  while (start < text.size()) {
    uint64_t end = start;
    while (end < text.size() && text.u8(end) != '|') ++end;
    XenNoteError error = apply_feature_token(text.sub(start, end - start), supported, required);
    if (error != XenNoteError::none) return error;
    start = end + 1;
  }
  return XenNoteError::none;
}

XenNoteError parse_xen_kernel(const ElfImage& image, const XenFeatures& hypervisor_features, XenKernelInfo& out) {
  out = XenKernelInfo{};
  NoteState state{out};
  unsigned count = 0;
  XenNoteError error = parse_note_segments(image, state, count);
  if (error == XenNoteError::none && count == 0) error = parse_note_sections(image, state, count);
  if (error != XenNoteError::none) return error;
  if (count == 0) return XenNoteError::no_xen_notes;
  if (state.bsd_symtab) return XenNoteError::bsd_symtab_unsupported;
  if ((error = check_identity(out)) != XenNoteError::none) return error;
  if ((error = compute_addresses(image, state)) != XenNoteError::none) return error;
  if ((error = check_placements(out)) != XenNoteError::none) return error;
  if (out.required_features.first_missing_from(hypervisor_features) != XenFeatures::bit_count)
    return XenNoteError::required_feature_unsupported;
  return XenNoteError::none;
}

XenNoteError check_dom0_capable(const XenKernelInfo& info) {
  if (info.has_supported_features_note && !info.supported_features.has(XENFEAT_dom0))
    return XenNoteError::not_dom0_capable;
  return XenNoteError::none;
}

}  // namespace boot
