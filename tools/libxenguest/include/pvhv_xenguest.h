/*
 * pvhv's PV domain builder on the host (tools/libxenguest, build/lib/libpvhv_xenguest.so):
 * libxenguest's job for a 64-bit PV domU, done over libxenctrl (our library over the dom0
 * relay, tools/README.md). It loads an ELF kernel with Xen notes (the one reader in
 * common/elf), lays the domain out as Xen 4.17's libxenguest does (kernel, ramdisk, p2m list,
 * start_info, xenstore and console pages, page tables, boot stack), populates its memory,
 * writes it through the relay, pins the L4, allocates the console and xenstore event channels,
 * initialises the hypercall page and sets vCPU 0's context. The domain stays paused: the
 * caller unpauses it (as libxl does).
 *
 * Not Xen's xc_dom_* API (Debian's xenguest.h): one call with the builder's inputs.
 * C, usable beside <xenctrl.h>.
 */
#ifndef PVHV_XENGUEST_H
#define PVHV_XENGUEST_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

struct xc_interface_core;
struct xen_domctl_createdomain;

/* The createdomain settings libxl gives a PV domU (Xen 4.17's defaults: one vCPU, 1023 event
 * channel ports, 64 grant frames, 1024 maptrack frames, grant tables version 1); the rest is
 * zeroed. The caller sets the handle (the domain's uuid) and then makes libxl's calls in libxl's
 * order: xc_domain_create, xc_domain_max_vcpus, xc_domain_setmaxmem and
 * xc_domain_set_memmap_limit with libxl's 1 MiB of slack. */
void pvhv_pv_createdomain_defaults(struct xen_domctl_createdomain* config);

struct pvhv_pv_image {
  const void* kernel; /* an ELF64 x86-64 kernel with Xen notes, or a bzImage (gzip/xz) */
  size_t kernel_size;
  const void* ramdisk; /* loaded as is (no decompression yet); may be NULL */
  size_t ramdisk_size;
  const char* cmdline;    /* start_info's cmd_line; may be NULL */
  uint64_t memory_kb;     /* the domain's memory (populated in full, 4 KiB pages) */
  uint32_t console_domid; /* the console backend's domain (0) */
  uint32_t store_domid;   /* the xenstore domain (0) */
};

/* What the builder did, for the caller's console backend and for layout checks. */
struct pvhv_pv_built {
  uint64_t total_pages;
  uint64_t virt_base;
  uint64_t entry;
  uint64_t start_info_pfn, start_info_va, start_info_mfn;
  uint64_t console_pfn, console_mfn;
  uint32_t console_port;
  uint64_t xenstore_pfn, xenstore_mfn;
  uint32_t store_port;
  uint64_t p2m_va, p2m_pages;
  uint64_t pt_base_va, pt_frames, l4_mfn;
  uint64_t ramdisk_va, ramdisk_len;
  uint64_t boot_stack_pfn, virt_pgtab_end;
  uint64_t shared_info_mfn;
  uint64_t pages_written; /* frames written through the relay (all-zero ones are skipped) */
  int xc_error;           /* on failure: XC_INVALID_KERNEL, XC_OUT_OF_MEMORY, XC_INTERNAL_ERROR */
  char message[256];      /* on failure: why */
};

/* Builds domain `domid` (created, max_mem set, nothing populated yet). 0, or -1 with errno:
 * EINVAL for a kernel that is not a Xen PV ELF (truncated, not ELF, bad notes), ENOMEM for one
 * that does not fit in memory_kb, or the errno of the hypercall that failed. On failure the
 * domain is left as it is (the caller destroys it, as libxl does). */
int pvhv_build_pv_domain(struct xc_interface_core* xch, uint32_t domid, const struct pvhv_pv_image* image,
                         struct pvhv_pv_built* built);

#ifdef __cplusplus
}
#endif
#endif
