// The PV domain builder's steps with I/O, in Xen 4.17's order (libxl's libxl__build_pv and
// libxenguest's xc_dom_* calls): parse the kernel, set the address size (and, ours, pass on the
// kernel's PVHV note), populate the memory,
// lay it out, write the kernel, ramdisk, p2m list, start_info and page tables through the relay,
// initialise the hypercall page, pin the L4, write the shared info page, set vCPU 0's context.
// The layout and every structure written are pure (pv_layout, pv_start); this file moves them.
//
// Frames Xen gives a domain are zeroed (Xen scrubs them; ours clears every frame it hands
// out), so pages that would be written as all zeroes are skipped: the relay's host-to-dom0
// direction is slow (tools/PROTOCOL.md "Speed") and a kernel's .bss is most of its size.
#include <cerrno>
#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <span>
#include <vector>

#include "common/elf/elf_image.h"
#include "common/elf/xen_elf_notes.h"
#include "tools/libxc/xc_api.h"
// Exported: what pvhv_xenguest.h declares, nothing else.
#pragma GCC visibility push(default)
#include "tools/libxenguest/include/pvhv_xenguest.h"
#pragma GCC visibility pop
#include "tools/libxenguest/kernel_image.h"
#include "tools/libxenguest/pv_layout.h"
#include "tools/libxenguest/pv_start.h"

namespace xenguest {
namespace {

constexpr unsigned kPopulateBatch = 512;  // extents per populate_physmap: one page of xen_pfn_t

class Builder {
 public:
  Builder(xc_interface* xch, uint32_t domid, const pvhv_pv_image& image, pvhv_pv_built& built)
      : xch_(xch), domid_(domid), image_(image), built_(built) {}

  int run() {
    if (parse_kernel() < 0 || set_address_size() < 0 || pass_pvhv_note() < 0) return -1;
    if (lay_out_memory() < 0 || populate() < 0) return -1;
    if (allocate_ports() < 0 || load_kernel() < 0 || load_ramdisk() < 0 || write_p2m() < 0) return -1;
    if (clear_magic_pages() < 0 || write_page_tables() < 0 || read_shared_info_frame() < 0) return -1;
    if (write_start_info() < 0 || init_hypercall_page() < 0 || pin_l4() < 0 || write_shared_info() < 0) return -1;
    if (set_context() < 0) return -1;
    report();
    return 0;
  }

 private:
  // Xen's xc_dom_panic: the error kind and a message; errno as the caller should see it.
  int fail(int xc_error, int err, const char* format, ...) __attribute__((format(printf, 4, 5))) {
    va_list args;
    va_start(args, format);
    std::vsnprintf(built_.message, sizeof(built_.message), format, args);
    va_end(args);
    built_.xc_error = xc_error;
    errno = err;
    return -1;
  }

  int fail_call(const char* what) {
    int err = errno;
    return fail(XC_INTERNAL_ERROR, err, "%s failed: %s", what, std::strerror(err));
  }

  // The features a domU may rely on: what the hypervisor offers, without dom0's, and
  // writable_page_tables, which XENVER_get_features reports only to translated guests: a PV
  // kernel turns it on itself (VMASST_TYPE_writable_pagetables, which both hypervisors
  // serve). Linux's FEATURES note requires it ("!writable_page_tables"); Xen's libxenguest
  // checks the notes against the kernel's own supported set only, so it never refuses it.
  boot::XenFeatures offered_features() {
    boot::XenFeatures features = boot::XenFeatures::of(XENFEAT_writable_page_tables);
    for (unsigned i = 0; i < XENFEAT_NR_SUBMAPS; ++i) {
      xen_feature_info_t info{};
      info.submap_idx = i;
      if (xc_version(xch_, XENVER_get_features, &info) == 0) features.add_word(i, info.submap);
    }
    boot::XenFeatures without_dom0;
    for (unsigned bit = 0; bit < boot::XenFeatures::bit_count; ++bit)
      if (features.has(bit) && bit != XENFEAT_dom0) without_dom0.add(bit);
    return without_dom0;
  }

  // An ELF image as is; a bzImage's payload decompressed first (kernel_image.h), as
  // libxenguest's xc_dom_try_bzimage_loader does before its ELF loader.
  int parse_kernel() {
    std::span<const uint8_t> file(static_cast<const uint8_t*>(image_.kernel), image_.kernel ? image_.kernel_size : 0);
    if (pvhv::xenguest::KernelImageError e = pvhv::xenguest::unpack_kernel(file, unpacked_);
        e != pvhv::xenguest::KernelImageError::none)
      return fail(XC_INVALID_KERNEL, EINVAL, "kernel: %s", pvhv::xenguest::describe(e));
    if (!unpacked_.empty()) file = unpacked_;
    boot::ByteSpan bytes(file.data(), file.size());
    if (boot::ElfError e = boot::ElfImage::parse(bytes, elf_); e != boot::ElfError::none)
      return fail(XC_INVALID_KERNEL, EINVAL, "kernel: not a Xen PV ELF image: %s", boot::describe(e));
    if (boot::XenNoteError e = boot::parse_xen_kernel(elf_, offered_features(), kernel_); e != boot::XenNoteError::none)
      return fail(XC_INVALID_KERNEL, EINVAL, "kernel: bad Xen notes: %s", boot::describe(e));
    // INIT_P2M only says the kernel can also take its p2m list at that address; like the
    // hypervisor's own builder (xen/boot/domain_builder.cpp), this one keeps the list in the
    // start-of-day mapping, which such kernels (Linux) accept as well.
    return 0;
  }

  int set_address_size() {  // libxenguest's x86_compat
    xen_domctl_t domctl{};
    domctl.cmd = XEN_DOMCTL_set_address_size;
    domctl.domain = domid_t(domid_);
    domctl.u.address_size.size = 64;
    return xc_domctl(xch_, &domctl) < 0 ? fail_call("XEN_DOMCTL_set_address_size") : 0;
  }

  // Ours: a kernel with our PVHV note reads unhooked L2 entries; the hypervisor's boot builder
  // reads the note itself, a toolstack-built domain's is passed on here (before it runs).
  // Xen 4.17 has no such domctl (ENOSYS) and never unhooks: nothing to tell it. A kernel
  // without the note (Linux) sends nothing: the hypervisor's default is "does not read them".
  int pass_pvhv_note() {
    if (!kernel_.reads_unhooked_entries) return 0;
    if (pvhv_xc_ptwr_reads_unhooked_set(xch_, domid_, 1) == 0 || errno == ENOSYS) return 0;
    return fail_call("the PVHV note (pvhv's ptwr-mode domctl)");
  }

  int lay_out_memory() {
    uint64_t pages = image_.memory_kb / 4;
    KernelPlacement placement{kernel_.virt_base, kernel_.virt_kstart, kernel_.virt_kend};
    LayoutError e = lay_out(placement, image_.ramdisk ? image_.ramdisk_size : 0, pages, layout_);
    if (e == LayoutError::out_of_memory || e == LayoutError::mapping_too_large)
      return fail(XC_OUT_OF_MEMORY, ENOMEM, "layout: %s (%lu pages)", describe(e), (unsigned long)pages);
    if (e != LayoutError::none) return fail(XC_INVALID_KERNEL, EINVAL, "layout: %s", describe(e));
    return 0;
  }

  // meminit_pv: 2 MiB extents for as many whole 2 MiB runs as the memory holds (fewer if the
  // hypervisor has fewer: the rest falls to the next step), then 4 KiB extents for what is left;
  // the answers are the p2m.
  int populate() {
    constexpr unsigned kSuperShift = 9;
    constexpr uint64_t kSuperPages = uint64_t(1) << kSuperShift;
    p2m_.assign(layout_.total_pages, 0);
    uint64_t pfn = 0;
    for (uint64_t super = layout_.total_pages >> kSuperShift; super > 0;) {
      uint64_t count = std::min<uint64_t>(super, kPopulateBatch);
      super -= count;
      std::vector<xen_pfn_t> extents(count);
      for (uint64_t j = 0; j < count; ++j) extents[j] = pfn + j * kSuperPages;
      int done = xc_domain_populate_physmap(xch_, domid_, count, kSuperShift, 0, extents.data());
      if (done < 0) return fail_call("XENMEM_populate_physmap (2 MiB extents)");
      for (int j = 0; j < done; ++j)
        for (uint64_t k = 0; k < kSuperPages; ++k) p2m_[pfn++] = extents[size_t(j)] + k;
    }
    for (uint64_t first = pfn; first < layout_.total_pages; first += kPopulateBatch) {
      uint64_t count = std::min<uint64_t>(kPopulateBatch, layout_.total_pages - first);
      std::vector<xen_pfn_t> extents(count);
      for (uint64_t i = 0; i < count; ++i) extents[i] = first + i;
      if (xc_domain_populate_physmap_exact(xch_, domid_, count, 0, 0, extents.data()) < 0)
        return fail_call("XENMEM_populate_physmap");
      for (uint64_t i = 0; i < count; ++i) p2m_[first + i] = extents[i];
    }
    return 0;
  }

  int allocate_ports() {  // libxl allocates them before building
    int console = xc_evtchn_alloc_unbound(xch_, domid_, image_.console_domid);
    if (console < 0) return fail_call("EVTCHNOP_alloc_unbound (console)");
    int store = xc_evtchn_alloc_unbound(xch_, domid_, image_.store_domid);
    if (store < 0) return fail_call("EVTCHNOP_alloc_unbound (xenstore)");
    console_port_ = uint32_t(console);
    store_port_ = uint32_t(store);
    return 0;
  }

  // One guest page: written unless it is all zeroes (the frame is zero already).
  int write_page(uint64_t pfn, const uint8_t* bytes) {
    static const uint8_t zeroes[kPageSize] = {};
    if (std::memcmp(bytes, zeroes, kPageSize) == 0) return 0;
    if (pvhv_xc_foreign_write(xch_, domid_, p2m_[pfn], 0, bytes, kPageSize) < 0) return fail_call("foreign write");
    ++pages_written_;
    return 0;
  }

  // A run of pages from an image built in host memory.
  int write_pages(uint64_t first_pfn, const std::vector<uint8_t>& bytes) {
    for (uint64_t offset = 0; offset < bytes.size(); offset += kPageSize)
      if (write_page(first_pfn + offset / kPageSize, bytes.data() + offset) < 0) return -1;
    return 0;
  }

  // Xen's elf_load_binary: each loadable segment's file bytes at its virtual address, the rest zero.
  int load_kernel() {
    std::vector<uint8_t> segment_image(layout_.kernel.pages * kPageSize, 0);
    bool failed = false;
    elf_.for_each_loadable_segment([&](const boot::ElfSegment& segment) {
      uint64_t offset = kernel_.destination_of(segment) - layout_.kernel.vstart;
      boot::ByteSpan file = elf_.file_bytes(segment);
      if (offset > segment_image.size() || file.size() > segment_image.size() - offset) {
        failed = true;
        return;
      }
      std::memcpy(segment_image.data() + offset, file.data(), file.size());
    });
    if (failed) return fail(XC_INVALID_KERNEL, EINVAL, "kernel: a segment outside the kernel's range");
    return write_pages(layout_.kernel.pfn, segment_image);
  }

  int load_ramdisk() {
    if (!layout_.has_ramdisk) return 0;
    std::vector<uint8_t> bytes(layout_.ramdisk.pages * kPageSize, 0);
    std::memcpy(bytes.data(), image_.ramdisk, image_.ramdisk_size);
    return write_pages(layout_.ramdisk.pfn, bytes);
  }

  int write_p2m() {
    std::vector<uint8_t> bytes(layout_.p2m.pages * kPageSize, 0);
    std::memcpy(bytes.data(), p2m_.data(), p2m_.size() * sizeof(uint64_t));
    return write_pages(layout_.p2m.pfn, bytes);
  }

  int clear_magic_pages() {  // libxenguest clears the xenstore and console pages explicitly
    if (xc_clear_domain_page(xch_, domid_, p2m_[layout_.xenstore_pfn]) < 0 ||
        xc_clear_domain_page(xch_, domid_, p2m_[layout_.console_pfn]) < 0)
      return fail_call("clearing the xenstore and console pages");
    return 0;
  }

  // The tables are ordinary frames until pinned: written as memory, as libxenguest writes them
  // through its foreign mapping, then validated by the hypervisor when the L4 is pinned.
  int write_page_tables() {
    for (uint64_t i = 0; i < layout_.page_tables.pages; ++i) {
      uint64_t entries[512];
      uint64_t pfn = layout_.page_tables.pfn + i;
      if (!page_table_entries(layout_, p2m_.data(), pfn, entries))
        return fail(XC_INTERNAL_ERROR, EINVAL, "page table %lu outside the layout", (unsigned long)pfn);
      if (write_page(pfn, reinterpret_cast<const uint8_t*>(entries)) < 0) return -1;
    }
    return 0;
  }

  int read_shared_info_frame() {
    xc_dominfo_t info{};
    int found = xc_domain_getinfo(xch_, domid_, 1, &info);
    if (found < 0) return fail_call("XEN_DOMCTL_getdomaininfo");
    if (found == 0 || info.domid != domid_) return fail(XC_INTERNAL_ERROR, ESRCH, "domain %u not found", domid_);
    shared_info_mfn_ = info.shared_info_frame;
    return 0;
  }

  int write_start_info() {
    StartInputs inputs{p2m_.data(), shared_info_mfn_, store_port_, console_port_, image_.cmdline};
    std::vector<uint8_t> page(kPageSize, 0);
    fill_start_info(layout_, inputs, *reinterpret_cast<start_info_t*>(page.data()));
    return write_page(layout_.start_info_pfn, page.data());
  }

  int init_hypercall_page() {  // xg_dom_boot.c setup_hypercall_page
    if (!kernel_.has_hypercall_page) return 0;
    xen_domctl_t domctl{};
    domctl.cmd = XEN_DOMCTL_hypercall_init;
    domctl.domain = domid_t(domid_);
    domctl.u.hypercall_init.gmfn = p2m_[layout_.pfn_of(kernel_.hypercall_page)];
    return xc_domctl(xch_, &domctl) < 0 ? fail_call("XEN_DOMCTL_hypercall_init") : 0;
  }

  int pin_l4() {
    mmuext_op op{};
    op.cmd = MMUEXT_PIN_L4_TABLE;
    op.arg1.mfn = p2m_[layout_.page_tables.pfn];
    return xc_mmuext_op(xch_, &op, 1, domid_) < 0 ? fail_call("MMUEXT_PIN_L4_TABLE") : 0;
  }

  int write_shared_info() {
    std::vector<uint8_t> page(kPageSize, 0);
    fill_shared_info(*reinterpret_cast<shared_info_t*>(page.data()));
    if (pvhv_xc_foreign_write(xch_, domid_, shared_info_mfn_, 0, page.data(), kPageSize) < 0)
      return fail_call("writing the shared info page");
    ++pages_written_;
    return 0;
  }

  int set_context() {
    vcpu_guest_context_any_t context;
    std::memset(&context, 0, sizeof(context));
    fill_initial_context(layout_, p2m_.data(), kernel_.entry, context.c);
    return xc_vcpu_setcontext(xch_, domid_, 0, &context) < 0 ? fail_call("XEN_DOMCTL_setvcpucontext") : 0;
  }

  void report() {
    built_.total_pages = layout_.total_pages;
    built_.virt_base = layout_.virt_base;
    built_.entry = kernel_.entry;
    built_.start_info_pfn = layout_.start_info_pfn;
    built_.start_info_va = layout_.start_info_address();
    built_.start_info_mfn = p2m_[layout_.start_info_pfn];
    built_.console_pfn = layout_.console_pfn;
    built_.console_mfn = p2m_[layout_.console_pfn];
    built_.console_port = console_port_;
    built_.xenstore_pfn = layout_.xenstore_pfn;
    built_.xenstore_mfn = p2m_[layout_.xenstore_pfn];
    built_.store_port = store_port_;
    built_.p2m_va = layout_.p2m.vstart;
    built_.p2m_pages = layout_.p2m.pages;
    built_.pt_base_va = layout_.page_tables.vstart;
    built_.pt_frames = layout_.page_tables.pages;
    built_.l4_mfn = p2m_[layout_.page_tables.pfn];
    built_.ramdisk_va = layout_.has_ramdisk ? layout_.ramdisk.vstart : 0;
    built_.ramdisk_len = layout_.has_ramdisk ? layout_.ramdisk.vend - layout_.ramdisk.vstart : 0;
    built_.boot_stack_pfn = layout_.boot_stack_pfn;
    built_.virt_pgtab_end = layout_.virt_pgtab_end;
    built_.shared_info_mfn = shared_info_mfn_;
    built_.pages_written = pages_written_;
  }

  xc_interface* xch_;
  uint32_t domid_;
  const pvhv_pv_image& image_;
  pvhv_pv_built& built_;
  std::vector<uint8_t> unpacked_;  // a bzImage's vmlinux (elf_ points into it), or empty
  boot::ElfImage elf_;
  boot::XenKernelInfo kernel_;
  PvLayout layout_;
  std::vector<uint64_t> p2m_;
  uint32_t console_port_ = 0;
  uint32_t store_port_ = 0;
  uint64_t shared_info_mfn_ = 0;
  uint64_t pages_written_ = 0;
};

}  // namespace
}  // namespace xenguest

int pvhv_build_pv_domain(xc_interface* xch, uint32_t domid, const pvhv_pv_image* image, pvhv_pv_built* built) {
  if (!xch || !image || !built) {
    errno = EINVAL;
    return -1;
  }
  std::memset(built, 0, sizeof(*built));
  return xenguest::Builder(xch, domid, *image, *built).run();
}
