#include "domain/descriptor_tables.h"
#include "arch/x86/cpu/cpu_tables.h"
#include "arch/x86/cpu/per_cpu.h"
#include "domain/domain.h"
#include "domain/domain_mmu.h"
#include "memory/boot_memory.h"
#include "memory/machine.h"
#include "mm/descriptor_rules.h"
#include "mm/page_refs.h"
#include "domain/guest_memory.h"

namespace descriptor_tables {
namespace {
constexpr uint64_t first_reserved_entry = Vcpu::max_gdt_frames * mm::kDescriptorsPerFrame;  // FIRST_RESERVED_GDT_ENTRY
constexpr uint64_t page = 4096;

// What each CPU's hardware GDT holds of a guest: whose descriptors, and how many entries.
// Per CPU, written by that CPU only (each has its own GDT: cpu_tables::guest_gdt_entries).
const Vcpu* loaded_vcpus[MAX_CPUS] = {};
unsigned loaded_entry_counts[MAX_CPUS] = {};

unsigned frames_for(uint64_t entries) {
  return unsigned((entries + mm::kDescriptorsPerFrame - 1) / mm::kDescriptorsPerFrame);
}

const uint64_t* descriptors_of(uint64_t mfn) { return machine::to_virtual<uint64_t>(mfn * page); }

void release_frames(const uint64_t* frames, unsigned count) {
  for (unsigned i = 0; i < count; ++i) mm::put_page_and_type(boot_memory::frame_table(), frames[i]);
}

bool is_loaded(const Vcpu& vcpu) { return loaded_vcpus[per_cpu::this_cpu()] == &vcpu; }
}  // namespace

void load(const Vcpu& vcpu) {
  uint64_t* gdt = cpu_tables::guest_gdt_entries();
  unsigned entry = 0;
  for (unsigned frame = 0; frame < frames_for(vcpu.gdt_entries); ++frame) {
    const uint64_t* descriptors = descriptors_of(vcpu.gdt_frames[frame]);
    for (unsigned i = 0; i < mm::kDescriptorsPerFrame && entry < vcpu.gdt_entries; ++i) gdt[entry++] = descriptors[i];
  }
  const unsigned cpu = per_cpu::this_cpu();
  for (unsigned i = entry; i < loaded_entry_counts[cpu]; ++i) gdt[i] = 0;  // nothing of the last vCPU's stays
  loaded_entry_counts[cpu] = vcpu.gdt_entries;
  loaded_vcpus[cpu] = &vcpu;
}

void destroy_gdt(Vcpu& vcpu) {
  release_frames(vcpu.gdt_frames, frames_for(vcpu.gdt_entries));
  for (uint64_t& frame : vcpu.gdt_frames) frame = 0;
  vcpu.gdt_entries = 0;
  if (is_loaded(vcpu)) load(vcpu);
}

long set_gdt(Vcpu& vcpu, uint64_t frame_list, uint64_t entries) {
  if (entries > first_reserved_entry) return -XEN_EINVAL;
  const unsigned count = frames_for(entries);
  uint64_t frames[Vcpu::max_gdt_frames]{};
  if (count && !guest_memory::copy_from(vcpu, frames, frame_list, count * sizeof(uint64_t))) return -XEN_EFAULT;
  return set_gdt_frames(vcpu, frames, entries);
}

long set_gdt_frames(Vcpu& vcpu, const uint64_t* frames, uint64_t entries) {
  if (entries > first_reserved_entry) return -XEN_EINVAL;
  const unsigned count = frames_for(entries);
  Domain& domain = *vcpu.domain;
  mm::MmuContext mmu = domain_mmu::context(domain);
  for (unsigned i = 0; i < count; ++i) {
    if (!mmu.frames.find(frames[i]) ||
        mm::get_page_and_type(mmu, frames[i], domain.id, mm::PageType::SegmentDescriptor) != 0) {
      release_frames(frames, i);
      return -XEN_EINVAL;
    }
  }
  destroy_gdt(vcpu);
  for (unsigned i = 0; i < count; ++i) vcpu.gdt_frames[i] = frames[i];
  vcpu.gdt_entries = unsigned(entries);
  if (mmu.effects.flush_domain_tlbs) domain_mmu::flush_after_type_change();  // a frame stopped being writable
  if (domains::current() == &vcpu) load(vcpu);
  return 0;
}

long update_descriptor(Vcpu& vcpu, uint64_t maddr, uint64_t descriptor) {
  if (maddr % sizeof(uint64_t) != 0 || !mm::check_descriptor(descriptor)) return -XEN_EINVAL;
  Domain& domain = *vcpu.domain;
  mm::MmuContext mmu = domain_mmu::context(domain);
  const uint64_t mfn = maddr / page;
  if (!mmu.frames.find(mfn) || mm::get_page(mmu.frames, mfn, domain.id) != 0) return -XEN_EINVAL;
  // Xen: a descriptor frame stays one; anything else must be able to be plain writable memory.
  const mm::PageType type = mmu.frames.info(mfn).type() == mm::PageType::SegmentDescriptor
                                ? mm::PageType::SegmentDescriptor
                                : mm::PageType::Writable;
  if (mm::get_page_type(mmu, mfn, type) != 0) {
    mm::put_page(mmu.frames, mfn);
    return -XEN_EINVAL;
  }
  __atomic_store_n(machine::to_virtual<uint64_t>(maddr), descriptor, __ATOMIC_RELAXED);
  mm::put_page_and_type(mmu.frames, mfn);
  if (mmu.effects.flush_domain_tlbs) domain_mmu::flush_after_type_change();
  // The running GDT holds a copy: refresh it when the frame is one of its frames.
  if (is_loaded(vcpu) && type == mm::PageType::SegmentDescriptor)
    for (unsigned i = 0; i < frames_for(vcpu.gdt_entries); ++i)
      if (vcpu.gdt_frames[i] == mfn) load(vcpu);
  return 0;
}
}  // namespace descriptor_tables
