#include "mm/mmu_update.h"

#include "mm/entry_update.h"
#include "mm/error.h"
#include "mm/page_refs.h"
#include "mm/table_access.h"

namespace mm {

namespace {

int update_machine_to_phys(MmuContext& context, uint64_t machine_address, uint64_t pfn) {
  const uint64_t mfn = machine_address >> kPageShift;
  if (!context.tables_of_caller) return error(XEN_EPERM);
  if (get_page(context.frames, mfn, context.owner_of_mapped_frames()) != 0) return error(XEN_EINVAL);
  int rc = error(XEN_EINVAL);
  if (context.m2p.entries != nullptr && mfn < context.m2p.nr_entries) {
    context.m2p.entries[mfn] = pfn;
    rc = 0;
  }
  put_page(context.frames, mfn);
  return rc;
}

}  // namespace

int write_as_data(MmuContext& context, uint64_t mfn, unsigned index, uint64_t value) {
  if (get_page_type(context, mfn, PageType::Writable) != 0) return error(XEN_EINVAL);
  // No block noted: the frame is no table (validation scans it afresh should it become one),
  // and other CPUs may write it at the same time.
  __atomic_store_n(&table_entries(context.frames, mfn)[index], value, __ATOMIC_RELEASE);
  put_page_type(context.frames, mfn);
  return 0;
}

int mmu_update_other(MmuContext& context, const mmu_update_t& request) {
  const uint64_t command = request.ptr & detail::kCommandMask;
  const uint64_t address = request.ptr & ~detail::kCommandMask;
  if (command == MMU_MACHPHYS_UPDATE) return update_machine_to_phys(context, address, request.val);
  return error(XEN_ENOSYS);
}

int mmu_update_batch(MmuContext& context, const mmu_update_t* requests, unsigned count, unsigned* done) {
  unsigned completed = 0;
  int rc = 0;
  HeldTables held;
  while (completed < count) {
    rc = mmu_update(context, requests[completed], held);
    if (rc != 0) break;
    ++completed;
  }
  held.release(context.frames);
  if (done != nullptr) *done = completed;
  return rc;
}

}  // namespace mm
