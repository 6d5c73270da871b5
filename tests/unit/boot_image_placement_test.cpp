// Crafted kernel images through the whole pure path the domain builder takes before it writes
// anything: ElfImage::parse, parse_xen_kernel, compute_dom0_layout, layout_places_image. An
// image either gets a layout that holds every byte the builder will write, or an error.
#include <gtest/gtest.h>

#include "boot/dom0_layout.h"
#include "common/elf/xen_elf_notes.h"
#include "boot_elf_builder.h"

using namespace boot;
using namespace boot_test;

namespace {

const XenFeatures our_features =
    XenFeatures::of(XENFEAT_writable_page_tables, XENFEAT_pae_pgdir_above_4gb, XENFEAT_dom0);
constexpr uint64_t entry = linux_kstart + 0x1000;
constexpr uint64_t hypercall_page = linux_kstart + 0x2000;
constexpr uint64_t MiB = 1ull << 20;

struct Placement {
  ElfError elf = ElfError::none;
  XenNoteError notes = XenNoteError::none;
  Dom0LayoutError layout = Dom0LayoutError::none;
  bool placed = false;
  Dom0Layout result;
};

Placement place(ElfBuilder builder, uint64_t initrd = 0, uint64_t nr_pages = 65536) {
  Placement p;
  Bytes bytes = builder.build();
  ElfImage image;
  if ((p.elf = ElfImage::parse(ByteSpan(bytes.data(), bytes.size()), image)) != ElfError::none) return p;
  XenKernelInfo kernel;
  if ((p.notes = parse_xen_kernel(image, our_features, kernel)) != XenNoteError::none) return p;
  if ((p.layout = compute_dom0_layout(kernel, initrd, nr_pages, p.result)) != Dom0LayoutError::none) return p;
  p.placed = layout_places_image(p.result, image, kernel);
  return p;
}

Bytes with(std::initializer_list<Bytes> extra) {
  Bytes notes = linux_notes(entry, hypercall_page);
  for (const Bytes& note : extra) notes.insert(notes.end(), note.begin(), note.end());
  return notes;
}

}  // namespace

TEST(BootImagePlacement, ALinuxLikeKernelIsPlaced) {
  Placement p = place(linux_like_kernel(linux_notes(entry, hypercall_page)), 3 * MiB);
  ASSERT_EQ(p.layout, Dom0LayoutError::none);
  EXPECT_TRUE(p.placed);
}

// Debian's Linux 6.1 gives INIT_P2M = 0x8000000000 (and MOD_START_PFN): the address is never
// a place to write, the p2m list and the initrd stay in the region.
TEST(BootImagePlacement, InitP2mOfDebianLinuxIsPlacedInTheRegion) {
  Placement p = place(linux_like_kernel(with({note("Xen", XEN_ELFNOTE_INIT_P2M, u64_desc(0x8000000000ull)),
                                              note("Xen", XEN_ELFNOTE_MOD_START_PFN, u32_desc(1))})),
                      8 * MiB);
  ASSERT_EQ(p.layout, Dom0LayoutError::none);
  EXPECT_TRUE(p.placed);
  EXPECT_GE(p.result.p2m.start, p.result.bootstrap.start);
  EXPECT_LE(p.result.p2m.end, p.result.bootstrap.end);
  EXPECT_EQ(p.result.initrd.size(), 8 * MiB);
}

TEST(BootImagePlacement, AnUnalignedHypercallPageInsideTheImageIsPlaced) {
  Placement p = place(linux_like_kernel(linux_notes(entry, hypercall_page + 0x123)));
  ASSERT_EQ(p.layout, Dom0LayoutError::none);
  EXPECT_TRUE(p.placed);
}

TEST(BootImagePlacement, AddressesOutsideTheImageAreRefusedByTheNotes) {
  EXPECT_EQ(place(linux_like_kernel(linux_notes(entry, 0x1000))).notes, XenNoteError::hypercall_page_outside_image);
  EXPECT_EQ(place(linux_like_kernel(linux_notes(entry, linux_kstart + 0x200000 - 0x800))).notes,
            XenNoteError::hypercall_page_outside_image)
      << "the page would run past the image";
  EXPECT_EQ(place(linux_like_kernel(linux_notes(linux_kstart - 1, hypercall_page))).notes,
            XenNoteError::entry_outside_image);
  EXPECT_EQ(place(linux_like_kernel(with({note("Xen", XEN_ELFNOTE_INIT_P2M, u64_desc(linux_kstart + 0x4000))}))).notes,
            XenNoteError::p2m_base_inside_image);
}

// VIRT_BASE (with ENTRY and HYPERCALL_PAGE moved along) in the non-canonical hole, across its
// edge, and in the hypervisor's slots: no layout.
TEST(BootImagePlacement, RegionsOutsideTheGuestsAddressSpaceAreRefused) {
  for (uint64_t base : {0x0000800000000000ull, 0x00007fffffe00000ull, 0xffff800000000000ull}) {
    ElfBuilder kernel = linux_like_kernel(concat({
        note("Xen", XEN_ELFNOTE_GUEST_OS, str_desc("linux")),
        note("Xen", XEN_ELFNOTE_XEN_VERSION, str_desc("xen-3.0")),
        note("Xen", XEN_ELFNOTE_VIRT_BASE, u64_desc(base)),
        note("Xen", XEN_ELFNOTE_ENTRY, u64_desc(base + linux_paddr + 0x1000)),
    }));
    Placement p = place(kernel);
    ASSERT_EQ(p.notes, XenNoteError::none) << std::hex << base;
    EXPECT_TRUE(p.layout == Dom0LayoutError::not_canonical || p.layout == Dom0LayoutError::overlaps_hypervisor)
        << std::hex << base << " " << describe(p.layout);
  }
}

// A segment's p_memsz is the image's to choose: one that wraps is refused by the ELF reader,
// one that is merely enormous by the domain's size, at once.
TEST(BootImagePlacement, EnormousSegmentsAreRefused) {
  ElfBuilder wraps = linux_like_kernel(linux_notes(entry, hypercall_page));
  wraps.segments[0].memsz = 1ull << 40;  // -2 GiB + 1 TiB wraps
  EXPECT_EQ(place(wraps).elf, ElfError::segment_address_overflow);
  ElfBuilder big = linux_like_kernel(linux_notes(entry, hypercall_page));
  big.segments[0].memsz = 1ull << 30;
  EXPECT_EQ(place(big).layout, Dom0LayoutError::too_small_for_kernel);
  EXPECT_EQ(place(big, 0, 1ull << 20).layout, Dom0LayoutError::none) << "a 4 GiB domain holds it";
}

// A layout made for another image does not hold this one: the builder's last check.
TEST(BootImagePlacement, ALayoutForAnotherImageDoesNotPlaceIt) {
  Bytes small_bytes = linux_like_kernel(linux_notes(entry, hypercall_page)).build();
  Bytes big_bytes = linux_like_kernel(linux_notes(entry, hypercall_page), 0x4000000).build();
  ElfImage small, big;
  ASSERT_EQ(ElfImage::parse(ByteSpan(small_bytes.data(), small_bytes.size()), small), ElfError::none);
  ASSERT_EQ(ElfImage::parse(ByteSpan(big_bytes.data(), big_bytes.size()), big), ElfError::none);
  XenKernelInfo small_kernel, big_kernel;
  ASSERT_EQ(parse_xen_kernel(small, our_features, small_kernel), XenNoteError::none);
  ASSERT_EQ(parse_xen_kernel(big, our_features, big_kernel), XenNoteError::none);
  Dom0Layout layout;
  ASSERT_EQ(compute_dom0_layout(small_kernel, 0, 65536, layout), Dom0LayoutError::none);
  EXPECT_TRUE(layout_places_image(layout, small, small_kernel));
  EXPECT_FALSE(layout_places_image(layout, big, big_kernel));
}
