#include "pv-kernel-patches/shared_info.h"

#include "kernel/boot/boot_info.h"
#include "kernel/console/panic.h"
#include "pv-kernel-patches/pv_ops.h"

namespace kernel {

namespace {
// A page of the image whose own frame is given up: its virtual address is reused for the
// shared info frame, which belongs to the hypervisor's bookkeeping of this domain.
alignas(4096) uint8_t shared_info_window[4096];
// Until the real page is mapped, event masking writes go to a harmless dummy.
shared_info_t boot_dummy;
}  // namespace

shared_info_t* shared_info_page = &boot_dummy;
vcpu_info_t* registered_vcpu_info = nullptr;

void shared_info_map() {
  using lib::PageTableEntry;
  uint64_t va = reinterpret_cast<uint64_t>(shared_info_window);
  lib::Mfn mfn{boot_info.start_info->shared_info >> 12};
  auto entry = PageTableEntry::make(
      mfn, PageTableEntry::kPresent | PageTableEntry::kWritable | PageTableEntry::kAccessed | PageTableEntry::kDirty);
  long rc = pv::ops.set_kernel_mapping(va, entry);
  if (rc < 0) panic("cannot map shared info (mfn %lx): %ld", mfn.value, rc);
  shared_info_page = reinterpret_cast<shared_info_t*>(shared_info_window);
}

}  // namespace kernel
