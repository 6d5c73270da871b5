// Pure pieces of the domain calls, unit-tested without a hypervisor
// (tests/xenctrl/libxc_domain_unit.cpp): the old xc_dominfo_t as Xen 4.17's xc_domain_getinfo
// fills it from XEN_DOMCTL_getdomaininfo, and the single-range memory map of
// xc_domain_set_memmap_limit.
#pragma once
#include "tools/libxc/xc_api.h"

namespace pvhv::xc {

// Xen 4.17's field-by-field copy: flag bits to bitfields, the shutdown code out of flags
// bits 16..23, a crash shown as crashed (not shutdown), max_pages in KiB.
void fill_dominfo(uint32_t domid, const xen_domctl_getdomaininfo_t& from, xc_dominfo_t& to);

// One E820_RAM entry from 0 to map_limitkb KiB (x86's xc_domain_set_memmap_limit).
e820entry memmap_limit_entry(unsigned long map_limitkb);

}  // namespace pvhv::xc
