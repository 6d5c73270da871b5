// A PV vCPU's GDT, as Xen 4.17's pv/descriptor-tables.c keeps it: HYPERVISOR_set_gdt gives up
// to 14 frames of descriptors below Xen's reserved selectors, each frame typed
// SegmentDescriptor (every descriptor checked by mm/descriptor_rules, and no writable mapping
// of it possible while so typed); HYPERVISOR_update_descriptor writes one checked descriptor.
// Xen maps the frames into the vCPU's GDT; here the running vCPU's descriptors are copied
// into the guest part of the one GDT (cpu_tables), refreshed on set_gdt, update_descriptor and
// context switch: the copy cannot go stale, since the frames can only change through here.
#pragma once
#include <stdint.h>

struct Vcpu;

namespace descriptor_tables {
// HYPERVISOR_set_gdt(frame_list, entries): -EINVAL for more than FIRST_RESERVED_GDT_ENTRY
// entries or a frame that is not the domain's or holds a refused descriptor (nothing changes
// then), -EFAULT for an unreadable list.
long set_gdt(Vcpu& vcpu, uint64_t frame_list, uint64_t entries);
// The same with the frames given (a vCPU context's gdt_frames: setvcpucontext, VCPUOP_initialise;
// Xen's pv_set_gdt), for a vCPU that need not be the running one.
long set_gdt_frames(Vcpu& vcpu, const uint64_t* frames, uint64_t entries);
// HYPERVISOR_update_descriptor(maddr, descriptor): -EINVAL for an unaligned address, a refused
// descriptor, a frame not the caller's, or one in use as something other than a descriptor
// frame or writable memory (a page table).
long update_descriptor(Vcpu& vcpu, uint64_t maddr, uint64_t descriptor);
// The vCPU's GDT frames released (Xen's pv_destroy_gdt): at teardown and vCPU reset.
void destroy_gdt(Vcpu& vcpu);
// The vCPU about to run: its descriptors into the hardware GDT (and another vCPU's gone).
void load(const Vcpu& vcpu);
}  // namespace descriptor_tables
