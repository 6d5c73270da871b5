// Pure: the segment descriptors a 64-bit PV guest may put in its GDT (and LDT), as Xen 4.17's
// check_descriptor (pv/descriptor-tables.c) decides: a frame typed SegmentDescriptor holds
// only such descriptors, and HYPERVISOR_update_descriptor writes only such a descriptor.
//  - not present: harmless, kept;
//  - code and data: kept, their DPL raised to 3 (a PV kernel runs in ring 3);
//  - type 0 (the upper half of a call gate): kept;
//  - a 64-bit call gate to a guest selector, FLAT_KERNEL_CS or an LDT selector: kept with DPL
//    0 (so its use faults and can be emulated), the original DPL in the target's RPL, its
//    reserved bits zero;
//  - any other system descriptor (TSS, LDT, interrupt or trap gate): refused.
#pragma once
#include <stdint.h>

namespace mm {

inline constexpr unsigned kDescriptorsPerFrame = 512;

// true and `descriptor` in the form it is stored, or false: refused.
bool check_descriptor(uint64_t& descriptor);
// Every descriptor of a frame checked and stored in its adjusted form; false (the frame as it
// was, except the descriptors before the bad one, adjusted: adjusting is idempotent) if one
// is refused.
bool check_descriptor_frame(uint64_t* descriptors);

}  // namespace mm
