#include <gtest/gtest.h>

#include <cstring>
#include <set>
#include <string>

#include "common/elf/xen_elf_notes.h"
#include "boot_elf_builder.h"

using namespace boot;
using namespace boot_test;

namespace {

const XenFeatures our_features =
    XenFeatures::of(XENFEAT_writable_page_tables, XENFEAT_pae_pgdir_above_4gb, XENFEAT_dom0);

constexpr uint64_t entry = linux_kstart + 0x1000;
constexpr uint64_t hypercall_page = linux_kstart + 0x2000;

XenNoteError parse_kernel(ElfBuilder builder, XenKernelInfo& info, const XenFeatures& features = our_features) {
  Bytes bytes = builder.build();
  ElfImage image;
  ElfError elf = ElfImage::parse(ByteSpan(bytes.data(), bytes.size()), image);
  EXPECT_EQ(elf, ElfError::none) << describe(elf);
  return parse_xen_kernel(image, features, info);
}

XenNoteError parse_notes(const Bytes& notes, XenKernelInfo& info) {
  return parse_kernel(linux_like_kernel(notes), info);
}

Bytes identity_notes() {
  return concat({note("Xen", XEN_ELFNOTE_GUEST_OS, str_desc("linux")),
                 note("Xen", XEN_ELFNOTE_XEN_VERSION, str_desc("xen-3.0")),
                 note("Xen", XEN_ELFNOTE_VIRT_BASE, u64_desc(linux_virt_base))});
}

}  // namespace

TEST(BootXenNotes, ParsesLinuxLikeKernel) {
  XenKernelInfo info;
  ASSERT_EQ(parse_notes(linux_notes(entry, hypercall_page), info), XenNoteError::none);
  EXPECT_EQ(info.virt_base, linux_virt_base);
  EXPECT_EQ(info.paddr_offset, 0u);
  EXPECT_EQ(info.entry, entry);
  EXPECT_TRUE(info.entry_from_note);
  EXPECT_TRUE(info.has_hypercall_page);
  EXPECT_EQ(info.hypercall_page, hypercall_page);
  EXPECT_EQ(info.virt_kstart, linux_kstart);
  EXPECT_EQ(info.virt_kend, linux_kstart + 0x200000);
  EXPECT_TRUE(info.suspend_cancel);
  EXPECT_EQ(info.pae, PaeMode::extended_cr3);
  EXPECT_STREQ(info.guest_os.text, "linux");
  EXPECT_STREQ(info.guest_version.text, "2.6");
  EXPECT_STREQ(info.xen_version.text, "xen-3.0");
  EXPECT_STREQ(info.loader.text, "generic");
  EXPECT_TRUE(info.supported_features.has(XENFEAT_writable_page_tables));
  EXPECT_TRUE(info.supported_features.has(XENFEAT_pae_pgdir_above_4gb));
  EXPECT_TRUE(info.required_features.has(XENFEAT_writable_page_tables));
  EXPECT_FALSE(info.required_features.has(XENFEAT_pae_pgdir_above_4gb));
  EXPECT_FALSE(info.has_init_p2m);
  EXPECT_FALSE(info.unmapped_initrd);
  EXPECT_EQ(check_dom0_capable(info), XenNoteError::none);
}

TEST(BootXenNotes, NumericNotesMayBeFourOrEightBytes) {
  uint64_t small_base = 0x400000, small_paddr = 0x0;
  for (bool eight : {false, true}) {
    auto num = [&](uint64_t v) { return eight ? u64_desc(v) : u32_desc(uint32_t(v)); };
    Bytes notes = concat(
        {note("Xen", XEN_ELFNOTE_LOADER, str_desc("generic")),
         note("Xen", XEN_ELFNOTE_XEN_VERSION, str_desc("xen-3.0")), note("Xen", XEN_ELFNOTE_VIRT_BASE, num(small_base)),
         note("Xen", XEN_ELFNOTE_PADDR_OFFSET, num(small_base)), note("Xen", XEN_ELFNOTE_ENTRY, num(small_base + 0x10)),
         note("Xen", XEN_ELFNOTE_HYPERCALL_PAGE, num(small_base + 0x1000))});
    ElfBuilder builder = linux_like_kernel(notes);
    builder.segments[0].vaddr = small_base;
    builder.segments[0].paddr = small_base + small_paddr;
    XenKernelInfo info;
    ASSERT_EQ(parse_kernel(builder, info), XenNoteError::none) << eight;
    EXPECT_EQ(info.virt_kstart, small_base);
    EXPECT_EQ(info.entry, small_base + 0x10);
    EXPECT_EQ(info.hypercall_page, small_base + 0x1000);
  }
}

TEST(BootXenNotes, RejectsNumericNoteOfBadSize) {
  Bytes bad = concat({identity_notes(), note("Xen", XEN_ELFNOTE_ENTRY, Bytes{1, 2, 3})});
  XenKernelInfo info;
  EXPECT_EQ(parse_notes(bad, info), XenNoteError::numeric_note_bad_size);
}

// Linux writes FEATURES (41 bytes) without a terminator; Xen's libelf reads a string note up
// to the next NUL in the image, which is the note's zero padding: the string is the whole
// descriptor. Ours stops at the descriptor's end, the same string, never beyond the note.
TEST(BootXenNotes, AnUnterminatedStringIsTheWholeDescriptor) {
  Bytes notes = concat({identity_notes(), note("Xen", XEN_ELFNOTE_GUEST_VERSION, Bytes{'a', 'b'})});
  XenKernelInfo info;
  ASSERT_EQ(parse_notes(notes, info), XenNoteError::none);
  EXPECT_STREQ(info.guest_version.text, "ab");
}

TEST(BootXenNotes, LinuxsUnterminatedFeatures) {
  const char* text = "!writable_page_tables|pae_pgdir_above_4gb";
  Bytes features(text, text + 41);  // as Linux 6.1's head_64.S emits it: no NUL
  Bytes notes = concat({identity_notes(), note("Xen", XEN_ELFNOTE_FEATURES, features)});
  XenKernelInfo info;
  ASSERT_EQ(parse_notes(notes, info), XenNoteError::none);
  EXPECT_TRUE(info.required_features.has(XENFEAT_writable_page_tables));
  EXPECT_TRUE(info.supported_features.has(XENFEAT_pae_pgdir_above_4gb));
}

// Our PVHV note: the kernel reads unhooked L2 entries (ptwr/writable_pagetables.h). Linux has
// none, and a note of that type under another owner, or another type of ours, is not it.
TEST(BootXenNotes, PvhvNoteSaysTheKernelReadsUnhookedEntries) {
  XenKernelInfo linux_info;
  ASSERT_EQ(parse_notes(identity_notes(), linux_info), XenNoteError::none);
  EXPECT_FALSE(linux_info.reads_unhooked_entries);

  XenKernelInfo ours;
  ASSERT_EQ(parse_notes(concat({identity_notes(), note(kPvhvNoteName, kPvhvNoteReadsUnhookedEntries, Bytes{})}), ours),
            XenNoteError::none);
  EXPECT_TRUE(ours.reads_unhooked_entries);

  XenKernelInfo other;
  ASSERT_EQ(parse_notes(concat({identity_notes(), note("GNU", kPvhvNoteReadsUnhookedEntries, u32_desc(1)),
                                note(kPvhvNoteName, 2, Bytes{})}),
                        other),
            XenNoteError::none);
  EXPECT_FALSE(other.reads_unhooked_entries);
}

TEST(BootXenNotes, RejectsMalformedNote) {
  Bytes bad = identity_notes();
  put(bad, 4, 0x1000, 4);  // first note's descsz runs past the segment
  XenKernelInfo info;
  EXPECT_EQ(parse_notes(bad, info), XenNoteError::malformed_note);
}

TEST(BootXenNotes, RejectsKernelWithoutXenNotes) {
  XenKernelInfo info;
  EXPECT_EQ(parse_notes(note("GNU", 3, u32_desc(1)), info), XenNoteError::no_xen_notes);

  ElfBuilder builder = linux_like_kernel(Bytes{});
  builder.segments.pop_back();
  EXPECT_EQ(parse_kernel(builder, info), XenNoteError::no_xen_notes);
  EXPECT_STREQ(describe(XenNoteError::no_xen_notes), "not a Xen PV kernel (no Xen ELF notes)");
}

TEST(BootXenNotes, FallsBackToNoteSections) {
  ElfBuilder builder = linux_like_kernel(note("GNU", 3, u32_desc(1)));
  Section section;
  section.data = linux_notes(entry, hypercall_page);
  builder.sections = {section};
  XenKernelInfo info;
  ASSERT_EQ(parse_kernel(builder, info), XenNoteError::none);
  EXPECT_EQ(info.entry, entry);
}

TEST(BootXenNotes, SkipsNoteSegmentAtOffsetZero) {
  ElfBuilder builder = linux_like_kernel(linux_notes(entry, hypercall_page));
  Bytes bytes = builder.build();
  put(bytes, builder.phdr(1) + 8, 0, 8);    // p_offset 0: binutils bug Xen tolerates
  put(bytes, builder.phdr(1) + 32, 64, 8);  // keep the range inside the image
  ElfImage image;
  ASSERT_EQ(ElfImage::parse(ByteSpan(bytes.data(), bytes.size()), image), ElfError::none);
  XenKernelInfo info;
  EXPECT_EQ(parse_xen_kernel(image, our_features, info), XenNoteError::no_xen_notes);
}

TEST(BootXenNotes, EightByteAlignedNoteSegment) {
  Bytes notes;
  for (const Bytes& n : {note("Xen", XEN_ELFNOTE_GUEST_OS, str_desc("linux"), 8),
                         note("Xen", XEN_ELFNOTE_XEN_VERSION, str_desc("xen-3.0"), 8),
                         note("Xen", XEN_ELFNOTE_VIRT_BASE, u64_desc(linux_virt_base), 8),
                         note("Xen", XEN_ELFNOTE_ENTRY, u64_desc(entry), 8)})
    notes = concat({notes, n});
  ElfBuilder builder = linux_like_kernel(notes);
  builder.segments[1].align = 8;
  XenKernelInfo info;
  ASSERT_EQ(parse_kernel(builder, info), XenNoteError::none);
  EXPECT_EQ(info.entry, entry);
}

TEST(BootXenNotes, MissingEntryFallsBackToElfEntryAsXenDoes) {
  XenKernelInfo info;
  ASSERT_EQ(parse_notes(identity_notes(), info), XenNoteError::none);
  EXPECT_FALSE(info.entry_from_note);
  EXPECT_EQ(info.entry, linux_kstart + 0x1000);
  EXPECT_FALSE(info.has_hypercall_page);
}

TEST(BootXenNotes, MissingVirtBaseMeansZero) {
  Bytes notes = concat({note("Xen", XEN_ELFNOTE_GUEST_OS, str_desc("linux")),
                        note("Xen", XEN_ELFNOTE_XEN_VERSION, str_desc("xen-3.0"))});
  ElfBuilder builder = linux_like_kernel(notes);
  builder.entry = linux_paddr;
  XenKernelInfo info;
  ASSERT_EQ(parse_kernel(builder, info), XenNoteError::none);
  EXPECT_EQ(info.virt_base, 0u);
  EXPECT_EQ(info.virt_kstart, linux_paddr);
}

TEST(BootXenNotes, RejectsWrongIdentity) {
  XenKernelInfo info;
  Bytes no_loader = concat({note("Xen", XEN_ELFNOTE_GUEST_OS, str_desc("netbsd")),
                            note("Xen", XEN_ELFNOTE_XEN_VERSION, str_desc("xen-3.0"))});
  EXPECT_EQ(parse_notes(no_loader, info), XenNoteError::wrong_loader);
  Bytes old_xen = concat({note("Xen", XEN_ELFNOTE_LOADER, str_desc("generic")),
                          note("Xen", XEN_ELFNOTE_XEN_VERSION, str_desc("xen-2.0"))});
  EXPECT_EQ(parse_notes(old_xen, info), XenNoteError::wrong_xen_version);
  Bytes no_version = note("Xen", XEN_ELFNOTE_GUEST_OS, str_desc("linux"));
  EXPECT_EQ(parse_notes(no_version, info), XenNoteError::wrong_xen_version);
}

TEST(BootXenNotes, RejectsAddressesOutsideImage) {
  XenKernelInfo info;
  EXPECT_EQ(parse_notes(linux_notes(linux_kstart - 1, hypercall_page), info), XenNoteError::entry_outside_image);
  EXPECT_EQ(parse_notes(linux_notes(entry, linux_kstart + 0x300000), info), XenNoteError::hypercall_page_outside_image);
  EXPECT_EQ(parse_notes(linux_notes(entry, linux_kstart + 0x200000 - 0x800), info),
            XenNoteError::hypercall_page_outside_image);  // straddles the end
  EXPECT_EQ(parse_notes(linux_notes(entry, linux_kstart - 0x1000), info), XenNoteError::hypercall_page_outside_image);
  Bytes p2m = concat({identity_notes(), note("Xen", XEN_ELFNOTE_INIT_P2M, u64_desc(linux_kstart))});
  EXPECT_EQ(parse_notes(p2m, info), XenNoteError::p2m_base_inside_image);
  Bytes high_base = concat({note("Xen", XEN_ELFNOTE_GUEST_OS, str_desc("linux")),
                            note("Xen", XEN_ELFNOTE_XEN_VERSION, str_desc("xen-3.0")),
                            note("Xen", XEN_ELFNOTE_VIRT_BASE, u64_desc(linux_virt_base)),
                            note("Xen", XEN_ELFNOTE_PADDR_OFFSET, u64_desc(0x2000000))});
  EXPECT_EQ(parse_notes(high_base, info), XenNoteError::virt_base_above_kernel);
  Bytes offset_only = concat({note("Xen", XEN_ELFNOTE_GUEST_OS, str_desc("linux")),
                              note("Xen", XEN_ELFNOTE_XEN_VERSION, str_desc("xen-3.0")),
                              note("Xen", XEN_ELFNOTE_PADDR_OFFSET, u64_desc(0))});
  EXPECT_EQ(parse_notes(offset_only, info), XenNoteError::paddr_offset_without_virt_base);
}

TEST(BootXenNotes, RequiredFeaturesMustBeSupported) {
  XenKernelInfo info;
  ElfBuilder builder = linux_like_kernel(linux_notes(entry, hypercall_page));
  EXPECT_EQ(parse_kernel(builder, info, XenFeatures::of(XENFEAT_dom0)), XenNoteError::required_feature_unsupported);
  EXPECT_EQ(info.required_features.first_missing_from(XenFeatures::of(XENFEAT_dom0)),
            unsigned(XENFEAT_writable_page_tables));

  Bytes unknown_required = concat({identity_notes(), note("Xen", XEN_ELFNOTE_FEATURES, str_desc("!time_travel"))});
  EXPECT_EQ(parse_notes(unknown_required, info), XenNoteError::unknown_required_feature);
  Bytes unknown_optional = concat({identity_notes(), note("Xen", XEN_ELFNOTE_FEATURES, str_desc("time_travel|dom0"))});
  ASSERT_EQ(parse_notes(unknown_optional, info), XenNoteError::none);
  EXPECT_TRUE(info.supported_features.has(XENFEAT_dom0));
}

TEST(BootXenNotes, FeatureStringEdgeCases) {
  auto parse = [](const char* text, XenFeatures& supported, XenFeatures& required) {
    return parse_xen_feature_string(ByteSpan(reinterpret_cast<const uint8_t*>(text), std::strlen(text)), supported,
                                    required);
  };
  XenFeatures supported, required;
  EXPECT_EQ(parse("writable_descriptor_tables||!auto_translated_physmap|", supported, required), XenNoteError::none);
  EXPECT_TRUE(supported.has(XENFEAT_writable_descriptor_tables));
  EXPECT_TRUE(supported.has(XENFEAT_auto_translated_physmap));
  EXPECT_TRUE(required.has(XENFEAT_auto_translated_physmap));
  EXPECT_FALSE(required.has(XENFEAT_writable_descriptor_tables));
  XenFeatures s2, r2;
  EXPECT_EQ(parse("dom0x", s2, r2), XenNoteError::none);  // prefix is not a match
  EXPECT_FALSE(s2.has(XENFEAT_dom0));
  EXPECT_EQ(parse("!", s2, r2), XenNoteError::unknown_required_feature);
  EXPECT_STREQ(xen_feature_name(XENFEAT_dom0), "dom0");
  EXPECT_EQ(xen_feature_name(XENFEAT_hvm_pirqs), nullptr);
}

TEST(BootXenNotes, SupportedFeaturesNoteAndDom0Check) {
  XenKernelInfo info;
  Bytes without_dom0 = concat(
      {identity_notes(), note("Xen", XEN_ELFNOTE_SUPPORTED_FEATURES, u32_desc(1u << XENFEAT_writable_page_tables))});
  ASSERT_EQ(parse_notes(without_dom0, info), XenNoteError::none);
  EXPECT_TRUE(info.has_supported_features_note);
  EXPECT_TRUE(info.supported_features.has(XENFEAT_writable_page_tables));
  EXPECT_EQ(check_dom0_capable(info), XenNoteError::not_dom0_capable);

  Bytes with_dom0 =
      concat({identity_notes(), note("Xen", XEN_ELFNOTE_SUPPORTED_FEATURES, u32_desc(1u << XENFEAT_dom0))});
  ASSERT_EQ(parse_notes(with_dom0, info), XenNoteError::none);
  EXPECT_EQ(check_dom0_capable(info), XenNoteError::none);
}

TEST(BootXenNotes, OtherNotes) {
  XenKernelInfo info;
  Bytes notes = concat({identity_notes(), note("Xen", XEN_ELFNOTE_MOD_START_PFN, u32_desc(1)),
                        note("Xen", XEN_ELFNOTE_INIT_P2M, u64_desc(0x8000000000ull)),
                        note("Xen", XEN_ELFNOTE_HV_START_LOW, u64_desc(0xf5800000)),
                        note("Xen", XEN_ELFNOTE_PAE_MODE, str_desc("yes,bimodal")),
                        note("Xen", XEN_ELFNOTE_L1_MFN_VALID, u64_desc(1)), note("Xen", 4242, Bytes{1})});
  ASSERT_EQ(parse_notes(notes, info), XenNoteError::none);
  EXPECT_TRUE(info.unmapped_initrd);
  EXPECT_TRUE(info.has_init_p2m);
  EXPECT_EQ(info.init_p2m_base, 0x8000000000ull);
  EXPECT_TRUE(info.has_hv_start_low);
  EXPECT_EQ(info.pae, PaeMode::bimodal);

  Bytes bsd = concat({identity_notes(), note("Xen", XEN_ELFNOTE_BSD_SYMTAB, str_desc("yes"))});
  EXPECT_EQ(parse_notes(bsd, info), XenNoteError::bsd_symtab_unsupported);
}

TEST(BootXenNotes, LongStringsAreTruncated) {
  std::string long_version(200, 'v');
  XenKernelInfo info;
  Bytes notes = concat({identity_notes(), note("Xen", XEN_ELFNOTE_GUEST_VERSION, str_desc(long_version))});
  ASSERT_EQ(parse_notes(notes, info), XenNoteError::none);
  EXPECT_EQ(std::strlen(info.guest_version.text), NoteString::capacity - 1);
}

TEST(BootXenNotes, EveryErrorHasADistinctMessage) {
  std::set<std::string> messages;
  for (int e = 0; e <= int(XenNoteError::not_dom0_capable); ++e) messages.insert(describe(XenNoteError(e)));
  EXPECT_EQ(messages.size(), size_t(XenNoteError::not_dom0_capable) + 1);
}
