#include "domain/shared_info.h"
#include "abi/xen_abi.h"
#include <xen/errno.h>
#include <xen/vcpu.h>
#include <xen/xen.h>
#include "arch/x86/cpu/registers.h"
#include "domain/domain.h"
#include "memory/boot_memory.h"
#include "memory/machine.h"
#include "mm/page_refs.h"
#include "pv/rules/guest_address.h"
#include "domain/guest_memory.h"
#include "time/clock.h"
#include "time/wallclock.h"

namespace shared_info_page {
bool create(Domain& domain) {
  // The page belongs to the domain so it can map it; the hypervisor writes it via the direct map.
  uint64_t mfn = boot_memory::allocate_frame(domain.id);
  if (!mfn) return false;
  // As Xen's share_xen_page_with_guest: a permanent writable type reference, so the page can
  // never become a page table (the hypervisor rewrites the time in it without validation).
  // The frame was just allocated: no one else can reach it yet, its state is set outright.
  mm::PageInfo& info = boot_memory::frame_table().info(mfn);
  info.set_counts(info.general_refs() + hold_general_refs, domain.id, info.allocated());
  info.set_type_state(hold_type_refs, mm::PageType::Writable, true);
  domain.shared_info_mfn = mfn;
  domain.shared_info = machine::to_virtual<shared_info_t>(mfn << 12);
  for (auto& info : domain.shared_info->vcpu_info) info.evtchn_upcall_mask = 1;
  domain.shared_info->arch.max_pfn = domain.tot_pages;
  uint64_t seconds = wallclock::seconds_since_epoch();
  domain.shared_info->wc_version = 2;
  domain.shared_info->wc_sec = uint32_t(seconds);
  domain.shared_info->wc_sec_hi = uint32_t(seconds >> 32);
  domain.shared_info->wc_nsec = 0;
  for (unsigned i = 0; i < domain.max_vcpus; ++i) update_time(domain.vcpus[i]);
  return true;
}

void release(Domain& domain) {
  if (!domain.shared_info_mfn || !domain.shared_info) return;
  domain.shared_info = nullptr;  // the hypervisor writes it no more
  mm::put_page_and_type(boot_memory::frame_table(), domain.shared_info_mfn);
}

namespace {
void update_time_area(const Vcpu& vcpu, vcpu_time_info_t record) {
  if (!vcpu.time_area) return;
  const uint32_t done = record.version;
  record.version = done | 1;  // an update in progress
  if (!guest_memory::write(vcpu, vcpu.time_area, record.version)) return;
  if (!guest_memory::write(vcpu, vcpu.time_area, record)) return;
  record.version = done;
  (void)guest_memory::write(vcpu, vcpu.time_area, record.version);
}
}  // namespace

long register_time_area(Vcpu& caller, Vcpu& vcpu, uint64_t argument) {
  vcpu_register_time_memory_area_t area;
  if (!guest_memory::read(caller, argument, area)) return -XEN_EFAULT;
  const uint64_t address = uint64_t(area.addr.v);
  if (!guest_address::addr_ok(address)) return -XEN_EFAULT;  // guest_handle_okay: the start only
  vcpu.time_area = address;
  update_time(vcpu);  // Xen's force_update_vcpu_system_time
  return 0;
}

void update_time(Vcpu& vcpu) {
  vcpu_time_info_t& time = vcpu.info()->time;
  uint64_t tsc = cpu::rdtsc();
  time.version++;
  asm volatile("" ::: "memory");
  time.tsc_timestamp = tsc;
  time.system_time = system_clock::scale().to_ns(tsc - system_clock::boot_tsc());
  time.tsc_to_system_mul = system_clock::scale().mul_frac;
  time.tsc_shift = system_clock::scale().shift;
  time.flags = XEN_PVCLOCK_TSC_STABLE_BIT;
  asm volatile("" ::: "memory");
  time.version++;
  update_time_area(vcpu, time);
}
}  // namespace shared_info_page
