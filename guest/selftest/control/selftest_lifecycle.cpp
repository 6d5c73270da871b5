// A domain's life as the toolstack drives it, with Xen 4.17's structures and answers
// (xen/common/domctl.c, domain.c, xen/arch/x86/domain.c, domctl.c):
//
// selftest=lifecycle, in dom0 (run on ours and on Xen 4.17): createdomain with bad requests
// (interface version -EACCES, HVM / HAP / unknown flags, no vCPUs, grant limits and version,
// emulation flags, a cpupool that does not exist) and good ones (the id handed back, an id in
// use -EEXIST, a reserved id allocating the next one); the new domain as getdomaininfo and
// getvcpuinfo report it (paused by the controller, vCPU down, no memory, shutdown code never
// set); pausing and unpausing it; getvcpucontext before a context (-ENODATA), on itself and
// beyond the vCPUs (-EINVAL); set/get_address_size; hypercall_init into a frame that is not the
// domain's (-EINVAL); setvcpucontext's checks (caller itself, non-canonical addresses, user mode
// without a user L4, an L4 that is not the domain's, a bad pointer) and, once the domain has
// memory (XENMEM_populate_physmap on its behalf), a context set, read back and refused with
// other page tables (-EOPNOTSUPP); destroydomain of itself (-EINVAL), of a domain that does
// not exist (-ESRCH), of the new domain: gone afterwards, free pages and the domain count back
// at their baseline, the frame audit clean (ours); an id of 1000 (ids are not slots); on ours
// the 32-slot table filled until -ENOMEM and emptied; then 10 create/destroy cycles, the same;
// then a domain destroyed while dom0 maps one of its pages, refused what Xen's is_dying rules
// refuse while it is dead, gone once dom0 lets go, and its id reused cleanly (dead_but_held).
//
// selftest=lifecycle-100: the 100-cycle loop alone (by hand, for its figures).
//
// selftest=lifecycle-domu, in dom0 beside the boot domain 1 (ours): reads domain 1's vCPU
// context, maps one of its frames, destroys it while it runs (its page tables, pinned L4, event
// channels, timers, writable-pagetable slots): it stays dead (XEN_DOMINF_dying) while dom0
// holds the frame, and is gone once dom0 unmaps it, every frame back, the audit clean.
//
// selftest=lifecycle-unprivileged, in a boot domU: createdomain, destroydomain, setvcpucontext,
// getvcpucontext, hypercall_init, set_address_size are -EPERM (after -EACCES for a stale
// version, and -ESRCH for a domain that does not exist).
#define __XEN_TOOLS__ 1  // domctl.h and sysctl.h are the tools' interface (guest handles need it)
#include <stdint.h>
#include <xen/xen.h>
#include <xen/domctl.h>
#include <xen/sysctl.h>
#include <xen/memory.h>

#include "arch/hypercall.h"
#include "arch/xen.h"
#include "kernel/boot/boot_info.h"
#include "kernel/console/console.h"
#include "arch/control.h"
#include "kernel/memory/direct_map.h"
#include "lib/linux_abi.h"
#include "kernel/memory/physical_memory.h"
#include "kernel/measurement/pvhv.h"
#include "selftest/control/control_selftests.h"
#include "kernel/events/time.h"
#include "kernel/events/timer.h"
#include "pv-kernel-patches/pv_ops.h"

namespace kernel {
namespace {
using namespace control;
constexpr domid_t kAbsent = 0x7000;  // no domain has this id in these tests
constexpr unsigned kCycles = 10;     // make test's short version of the 100-cycle loop
constexpr uint64_t kNonCanonical = 0x0000800000000000ull;

long create(const xen_domctl_createdomain& config, domid_t requested, domid_t& created) {
  xen_domctl_t op = domctl_request(XEN_DOMCTL_createdomain, requested);
  op.u.createdomain = config;
  long rc = domctl(op);
  created = op.domain;
  return rc;
}

long destroy(domid_t domain) { return simple_domctl(XEN_DOMCTL_destroydomain, domain); }

bool flag(const xen_domctl_getdomaininfo& info, uint32_t bit) { return (info.flags & bit) != 0; }

// Domains in the table (getdomaininfolist from 0).
long domain_count() {
  static xen_domctl_getdomaininfo infos[64];
  xen_sysctl_t op{};
  op.cmd = XEN_SYSCTL_getdomaininfolist;
  op.interface_version = XEN_SYSCTL_INTERFACE_VERSION;
  op.u.getdomaininfolist.first_domain = 0;
  op.u.getdomaininfolist.max_domains = 64;
  set_xen_guest_handle(op.u.getdomaininfolist.buffer, infos);
  return sysctl(op) == 0 ? long(op.u.getdomaininfolist.num_domains) : -1;
}

// Xen frees a destroyed domain's last pages (struct domain, shared_info: xenheap) after an
// RCU grace period; give it a moment before comparing.
uint64_t free_pages_settled(uint64_t baseline) {
  uint64_t now = free_pages();
  for (unsigned i = 0; i < 50 && now != baseline; ++i) {
    sleep_until(system_time_ns() + 20'000'000);
    now = free_pages();
  }
  return now;
}

// Our hypervisor has a private sysctl that runs the frame audit (-ENOSYS on Xen 4.17).
bool on_ours() { return sys_pvhv_audit() != -linux_abi::kENOSYS; }

long vcpu_context(uint32_t cmd, domid_t domain, uint32_t vcpu, vcpu_guest_context* context) {
  xen_domctl_t op = domctl_request(cmd, domain);
  op.u.vcpucontext.vcpu = vcpu;
  set_xen_guest_handle(op.u.vcpucontext.ctxt, context);
  return domctl(op);
}

long vcpu_context_at(uint32_t cmd, domid_t domain, uint64_t address) {
  xen_domctl_t op = domctl_request(cmd, domain);
  op.u.vcpucontext.ctxt.p = reinterpret_cast<vcpu_guest_context_t*>(address);
  return domctl(op);
}

long address_size(uint32_t cmd, domid_t domain, uint32_t& size) {
  xen_domctl_t op = domctl_request(cmd, domain);
  op.u.address_size.size = size;
  long rc = domctl(op);
  size = op.u.address_size.size;
  return rc;
}

long hypercall_init(domid_t domain, uint64_t gmfn) {
  xen_domctl_t op = domctl_request(XEN_DOMCTL_hypercall_init, domain);
  op.u.hypercall_init.gmfn = gmfn;
  return domctl(op);
}

// One page for `domain` at pfn 0 (XENMEM_populate_physmap on its behalf): its mfn, or 0.
uint64_t populate_one(domid_t domain, long& rc) {
  xen_pfn_t frame = 0;
  xen_memory_reservation_t reservation{};
  set_xen_guest_handle(reservation.extent_start, &frame);
  reservation.nr_extents = 1;
  reservation.extent_order = 0;
  reservation.domid = domain;
  rc = xen::memory_op(XENMEM_populate_physmap, &reservation);
  return rc == 1 ? frame : 0;
}

// XENMEM_increase_reservation of one page for `domain`, no extent list: the extents done.
long increase_one(domid_t domain) {
  xen_memory_reservation_t reservation{};
  reservation.nr_extents = 1;
  reservation.domid = domain;
  return xen::memory_op(XENMEM_increase_reservation, &reservation);
}

// XENMEM_decrease_reservation of frame `mfn` on behalf of `domain`: the extents done.
long decrease_one(domid_t domain, uint64_t mfn) {
  xen_pfn_t frame = mfn;
  xen_memory_reservation_t reservation{};
  set_xen_guest_handle(reservation.extent_start, &frame);
  reservation.nr_extents = 1;
  reservation.domid = domain;
  return xen::memory_op(XENMEM_decrease_reservation, &reservation);
}

long maximum_gpfn(domid_t domain) { return xen::memory_op(XENMEM_maximum_gpfn, &domain); }

// One mmuext_op with `foreigndom` naming another domain (a pin or unpin on its behalf).
long mmuext_for(domid_t domain, unsigned command, uint64_t mfn) {
  mmuext_op_t op{};
  op.cmd = command;
  op.arg1.mfn = mfn;
  return arch::hypercall(__HYPERVISOR_mmuext_op, arch::arg(&op), 1, 0, domain);
}

// A first context: kernel mode, the L4 at `l4_mfn`, entry and stack somewhere canonical (the
// domain stays paused: it never runs them).
vcpu_guest_context first_context(uint64_t l4_mfn) {
  vcpu_guest_context c{};
  c.flags = VGCF_in_kernel | VGCF_online;
  c.user_regs.rip = 0xffffffff80001000ull;
  c.user_regs.rsp = 0xffffffff80002000ull;
  c.user_regs.cs = FLAT_KERNEL_CS;
  c.user_regs.ss = FLAT_KERNEL_SS;
  c.user_regs.rflags = 0x202;
  c.kernel_ss = FLAT_KERNEL_SS;
  c.kernel_sp = 0xffffffff80002000ull;
  c.event_callback_eip = 0xffffffff80003000ull;
  c.failsafe_callback_eip = 0xffffffff80003100ull;
  c.syscall_callback_eip = 0xffffffff80003200ull;
  c.ctrlreg[3] = l4_mfn << 12;
  return c;
}

vcpu_guest_context context_buffer;

// Pages of dom0's kernel range where it maps frames of another domain (foreigndom): `page` 0
// or 1.
constexpr uint64_t kForeignWindowVa = kVirtBase + (1ull << 30) - (16ull << 20);

pv::PageTableSlot foreign_window(unsigned page = 0) {
  const uint64_t va = kForeignWindowVa + page * 4096ull;
  return table_slot(kernel_l1_for(va), lib::table_index(va, Level::l1), Level::l1);
}

long map_foreign_read_only(domid_t owner, uint64_t mfn, unsigned page = 0) {
  long rc = pv::ops.map_foreign(foreign_window(page), PageTableEntry::make(Mfn{mfn}, PageTableEntry::kPresent), owner);
  pv::ops.invalidate_page(kForeignWindowVa + page * 4096ull);
  return rc;
}

void unmap_foreign(unsigned page = 0) {
  pv::ops.raw_mmu_update(foreign_window(page).machine_address, 0);
  pv::ops.invalidate_page(kForeignWindowVa + page * 4096ull);
}

// ---------------------------------------------------------------------------------------------

void bad_creations(SelfTest& test) {
  domid_t id = 0;
  xen_domctl_t op = domctl_request(XEN_DOMCTL_createdomain, 0);
  op.u.createdomain = control::pv_domain_config();
  op.interface_version = XEN_DOMCTL_INTERFACE_VERSION - 1;
  test.check("createdomain with the previous interface version: -EACCES", domctl(op), -XEN_EACCES);
  xen_domctl_createdomain config = control::pv_domain_config();
  config.flags = XEN_DOMCTL_CDF_hvm;
  test.check("createdomain of an HVM domain (no HVM support here): -EINVAL", create(config, 0, id), -XEN_EINVAL);
  config.flags = XEN_DOMCTL_CDF_hap;
  test.check("createdomain with HAP but not HVM: -EINVAL", create(config, 0, id), -XEN_EINVAL);
  config.flags = 1u << 12;
  test.check("createdomain with an unknown flag: -EINVAL", create(config, 0, id), -XEN_EINVAL);
  config = control::pv_domain_config();
  config.max_vcpus = 0;
  test.check("createdomain with no vCPUs: -EINVAL", create(config, 0, id), -XEN_EINVAL);
  config = control::pv_domain_config();
  config.grant_opts = 0;
  test.check("createdomain with grant version 0: -EINVAL", create(config, 0, id), -XEN_EINVAL);
  config = control::pv_domain_config();
  config.max_grant_frames = 0;
  test.check("createdomain with no grant frames: -EINVAL", create(config, 0, id), -XEN_EINVAL);
  config = control::pv_domain_config();
  config.max_maptrack_frames = 1 << 20;
  test.check("createdomain beyond the maptrack limit: -EINVAL", create(config, 0, id), -XEN_EINVAL);
  config = control::pv_domain_config();
  config.arch.emulation_flags = XEN_X86_EMU_LAPIC;
  test.check("createdomain of a PV domain emulating a local APIC: -EOPNOTSUPP", create(config, 0, id), -XEN_EOPNOTSUPP);
  config = control::pv_domain_config();
  config.cpupool_id = 7;
  test.check("createdomain in a cpupool that does not exist: -ESRCH", create(config, 0, id), -XEN_ESRCH);
  config = control::pv_domain_config();
  config.max_vcpus = 2;
  long rc = create(config, 0, id);
  test.check("createdomain with 2 vCPUs", rc, 0);
  if (rc == 0) test.check("... destroyed", destroy(id), 0);
  config.max_vcpus = 8;
  rc = create(config, 0, id);
  test.check("createdomain with 8 vCPUs", rc, 0);
  if (rc == 0) test.check("... destroyed", destroy(id), 0);
  config.max_vcpus = 9;
  rc = create(config, 0, id);
  if (on_ours()) {
    test.check("createdomain with 9 vCPUs: ours has at most 8 per domain, -EINVAL", rc, -XEN_EINVAL);
  } else {
    test.check("createdomain with 9 vCPUs (Xen: up to MAX_VIRT_CPUS)", rc, 0);
    if (rc == 0) test.check("... destroyed", destroy(id), 0);
  }
  config.max_vcpus = 0x10000;  // beyond Xen's MAX_VIRT_CPUS (8192) too
  test.check("createdomain with 65536 vCPUs: -EINVAL", create(config, 0, id), -XEN_EINVAL);
}

void new_domain_as_reported(SelfTest& test, domid_t id) {
  xen_domctl_getdomaininfo info;
  domid_t reported = 0;
  test.check("getdomaininfo of the new domain", get_info(id, info, &reported), 0);
  test.check("... it is the one asked for", reported, id);
  test.check("... paused by the controller (domain_create)", flag(info, XEN_DOMINF_paused), true);
  test.check("... no vCPU online: neither running nor blocked", flag(info, XEN_DOMINF_running | XEN_DOMINF_blocked),
             false);
  test.check("... not dying, shut down or HVM",
             flag(info, XEN_DOMINF_dying | XEN_DOMINF_shutdown | XEN_DOMINF_hvm_guest), false);
  test.check("... shutdown code never set", info.flags >> XEN_DOMINF_shutdownshift, 0xffff);
  test.check("... flags as a whole", long(info.flags), 0xffff0000l | XEN_DOMINF_paused);
  test.check("... no memory yet", long(info.tot_pages), 0);
  test.check("... nr_online_vcpus 0", info.nr_online_vcpus, 0);
  test.check("... no vCPU yet (max_vcpu_id invalid: max_vcpus makes them)", long(info.max_vcpu_id),
             long(XEN_INVALID_MAX_VCPU_ID));
  test.check("... a shared_info frame", info.shared_info_frame != 0, true);
  test.check("... max_pages 0 until max_mem", long(info.max_pages), 0);
  xen_domctl_t op = domctl_request(XEN_DOMCTL_getvcpuinfo, id);
  test.check("getvcpuinfo of vCPU 0 before max_vcpus: -ESRCH", domctl(op), -XEN_ESRCH);
  test.check("getvcpucontext before max_vcpus: -EINVAL",
             vcpu_context(XEN_DOMCTL_getvcpucontext, id, 0, &context_buffer), -XEN_EINVAL);
  op = domctl_request(XEN_DOMCTL_max_vcpus, id);
  op.u.max_vcpus.max = 2;
  test.check("max_vcpus 2 (createdomain said 1): -EINVAL", domctl(op), -XEN_EINVAL);
  op.u.max_vcpus.max = 1;
  test.check("max_vcpus 1: the vCPU is made", domctl(op), 0);
  test.check("max_vcpus 1 again: nothing more to make", domctl(op), 0);
  get_info(id, info);
  test.check("getdomaininfo: max_vcpu_id 0 now", info.max_vcpu_id, 0);
  test.check("... still no vCPU online", info.nr_online_vcpus, 0);
  test.check("... flags unchanged", long(info.flags), 0xffff0000l | XEN_DOMINF_paused);
  op = domctl_request(XEN_DOMCTL_getvcpuinfo, id);
  test.check("getvcpuinfo of its vCPU 0", domctl(op), 0);
  test.check("... offline (VPF_down)", op.u.getvcpuinfo.online, 0);
  test.check("... not running", op.u.getvcpuinfo.running, 0);
  op = domctl_request(XEN_DOMCTL_getvcpuinfo, id);
  op.u.getvcpuinfo.vcpu = 1;
  test.check("getvcpuinfo of vCPU 1: -EINVAL", domctl(op), -XEN_EINVAL);
}

void pause_and_unpause(SelfTest& test, domid_t id) {
  xen_domctl_getdomaininfo info;
  test.check("pausedomain of the new domain (count 2)", simple_domctl(XEN_DOMCTL_pausedomain, id), 0);
  test.check("unpausedomain (count 1)", simple_domctl(XEN_DOMCTL_unpausedomain, id), 0);
  get_info(id, info);
  test.check("... still paused", flag(info, XEN_DOMINF_paused), true);
  test.check("unpausedomain: the toolstack's first unpause (count 0)", simple_domctl(XEN_DOMCTL_unpausedomain, id), 0);
  get_info(id, info);
  test.check("... no longer paused", flag(info, XEN_DOMINF_paused), false);
  test.check("... and still not running (no vCPU up)", flag(info, XEN_DOMINF_running | XEN_DOMINF_blocked), false);
  test.check("unpausedomain again: -EINVAL", simple_domctl(XEN_DOMCTL_unpausedomain, id), -XEN_EINVAL);
  test.check("pausedomain again", simple_domctl(XEN_DOMCTL_pausedomain, id), 0);
}

void before_a_context(SelfTest& test, domid_t id) {
  test.check("getvcpucontext before a context: -ENODATA",
             vcpu_context(XEN_DOMCTL_getvcpucontext, id, 0, &context_buffer), -XEN_ENODATA);
  test.check("getvcpucontext of vCPU 1: -EINVAL", vcpu_context(XEN_DOMCTL_getvcpucontext, id, 1, &context_buffer),
             -XEN_EINVAL);
  test.check("getvcpucontext of dom0's own running vCPU: -EINVAL",
             vcpu_context(XEN_DOMCTL_getvcpucontext, 0, 0, &context_buffer), -XEN_EINVAL);
  uint32_t size = 0;
  test.check("get_address_size", address_size(XEN_DOMCTL_get_address_size, id, size), 0);
  test.check("... 64", size, 64);
  size = 64;
  test.check("set_address_size 64", address_size(XEN_DOMCTL_set_address_size, id, size), 0);
  size = 16;
  test.check("set_address_size 16: -EINVAL", address_size(XEN_DOMCTL_set_address_size, id, size), -XEN_EINVAL);
  if (on_ours()) {
    size = 32;
    test.check("set_address_size 32: no compat guests here, -EOPNOTSUPP (Xen without PV32)",
               address_size(XEN_DOMCTL_set_address_size, id, size), -XEN_EOPNOTSUPP);
  }
  test.check("hypercall_init into one of dom0's frames: -EINVAL (not the domain's)",
             hypercall_init(id, va_to_mfn(reinterpret_cast<uint64_t>(&context_buffer)).value), -XEN_EINVAL);
  test.check("hypercall_init into a frame beyond RAM: -EINVAL", hypercall_init(id, 1ull << 40), -XEN_EINVAL);

  uint64_t dom0_frame = va_to_mfn(reinterpret_cast<uint64_t>(&context_buffer)).value;
  context_buffer = first_context(dom0_frame);
  test.check("setvcpucontext of dom0 itself: -EINVAL", vcpu_context(XEN_DOMCTL_setvcpucontext, 0, 0, &context_buffer),
             -XEN_EINVAL);
  test.check("setvcpucontext of vCPU 1: -EINVAL", vcpu_context(XEN_DOMCTL_setvcpucontext, id, 1, &context_buffer),
             -XEN_EINVAL);
  test.check("setvcpucontext from a bad pointer: -EFAULT",
             vcpu_context_at(XEN_DOMCTL_setvcpucontext, id, 0x0000000010000000ull), -XEN_EFAULT);
  context_buffer.user_regs.rip = kNonCanonical;
  test.check("setvcpucontext with a non-canonical rip: -EINVAL",
             vcpu_context(XEN_DOMCTL_setvcpucontext, id, 0, &context_buffer), -XEN_EINVAL);
  context_buffer = first_context(dom0_frame);
  context_buffer.trap_ctxt[14].address = kNonCanonical;
  test.check("... a non-canonical trap handler: -EINVAL",
             vcpu_context(XEN_DOMCTL_setvcpucontext, id, 0, &context_buffer), -XEN_EINVAL);
  context_buffer = first_context(dom0_frame);
  context_buffer.event_callback_eip = kNonCanonical;
  test.check("... a non-canonical event callback: -EINVAL",
             vcpu_context(XEN_DOMCTL_setvcpucontext, id, 0, &context_buffer), -XEN_EINVAL);
  context_buffer = first_context(dom0_frame);
  context_buffer.flags = VGCF_online;
  test.check("... user mode without a user L4: -EINVAL",
             vcpu_context(XEN_DOMCTL_setvcpucontext, id, 0, &context_buffer), -XEN_EINVAL);
  xen_domctl_getdomaininfo info;
  get_info(id, info);
  context_buffer = first_context(info.shared_info_frame);
  test.check("... its shared_info page as its L4: -EINVAL (the page stays writable)",
             vcpu_context(XEN_DOMCTL_setvcpucontext, id, 0, &context_buffer), -XEN_EINVAL);
  context_buffer = first_context(dom0_frame);
  test.check("... an L4 that is dom0's frame: -EINVAL", vcpu_context(XEN_DOMCTL_setvcpucontext, id, 0, &context_buffer),
             -XEN_EINVAL);
  test.check("... nothing was set: getvcpucontext still -ENODATA",
             vcpu_context(XEN_DOMCTL_getvcpucontext, id, 0, &context_buffer), -XEN_ENODATA);
}

// Needs memory on behalf of the domain (XENMEM_populate_physmap with its domid).
void with_a_context(SelfTest& test, domid_t id) {
  test.check("max_mem of the new domain: 4 MiB", max_mem(id, 4096), 0);
  long rc = 0;
  uint64_t l4 = populate_one(id, rc);
  if (rc != 1 && on_ours()) {
    // memory_op on behalf of another domain is another part of issue 9 (h-xdom's).
    test.note("populate_physmap for another domain not served yet here: rc", rc);
    return;
  }
  test.check("populate_physmap of one page for the new domain", rc, 1);
  if (!l4) return;
  xen_domctl_getdomaininfo info;
  get_info(id, info);
  test.check("... its tot_pages 1", long(info.tot_pages), 1);
  context_buffer = first_context(l4);
  context_buffer.user_regs.cs = FLAT_KERNEL_CS & ~3;  // RPL 0: Xen raises it to 3
  test.check("setvcpucontext with that page as its L4", vcpu_context(XEN_DOMCTL_setvcpucontext, id, 0, &context_buffer),
             0);
  test.check("hypercall_init into its L4: -EPERM (cannot be writable)", hypercall_init(id, l4), -XEN_EPERM);
  static vcpu_guest_context back;
  back = vcpu_guest_context{};
  test.check("getvcpucontext", vcpu_context(XEN_DOMCTL_getvcpucontext, id, 0, &back), 0);
  test.check("... ctrlreg[3] is the L4", long(back.ctrlreg[3]), long(l4 << 12));
  test.check("... rip", long(back.user_regs.rip), long(context_buffer.user_regs.rip));
  test.check("... rsp", long(back.user_regs.rsp), long(context_buffer.user_regs.rsp));
  test.check("... cs with RPL 3", long(back.user_regs.cs & 3), 3);
  test.check("... kernel_sp", long(back.kernel_sp), long(context_buffer.kernel_sp));
  test.check("... event callback", long(back.event_callback_eip), long(context_buffer.event_callback_eip));
  test.check("... failsafe callback", long(back.failsafe_callback_eip), long(context_buffer.failsafe_callback_eip));
  test.check("... syscall callback", long(back.syscall_callback_eip), long(context_buffer.syscall_callback_eip));
  test.check("... online and in kernel mode", long(back.flags & (VGCF_online | VGCF_in_kernel)),
             VGCF_online | VGCF_in_kernel);
  get_info(id, info);
  test.check("getdomaininfo: one vCPU online now", info.nr_online_vcpus, 1);
  test.check("... still paused, so not running", flag(info, XEN_DOMINF_running), false);
  context_buffer = first_context(l4 + 1);
  test.check("setvcpucontext again with another L4: -EOPNOTSUPP",
             vcpu_context(XEN_DOMCTL_setvcpucontext, id, 0, &context_buffer), -XEN_EOPNOTSUPP);
}

void check_destroyed(SelfTest& test, domid_t id, uint64_t baseline_free, long baseline_domains, const char* what) {
  xen_domctl_getdomaininfo info;
  domid_t reported = id;
  long rc = get_info(id, info, &reported);
  test.check(what, rc == -XEN_ESRCH || (rc == 0 && reported != id), true);
  test.check("... free pages back at their baseline", long(free_pages_settled(baseline_free)), long(baseline_free));
  test.check("... domain count back at its baseline", domain_count(), baseline_domains);
  if (on_ours()) test.check("... frame audit clean", sys_pvhv_audit(), 0);
}

// Ids are not slots: a domain created with id 1000 is found by id, and getdomaininfo of an id
// below it with nothing in between reports it (4.17's search for the next one up).
void sparse_ids(SelfTest& test) {
  domid_t id = 0;
  test.check("createdomain with id 1000", create(control::pv_domain_config(), 1000, id), 0);
  test.check("... op->domain 1000", id, 1000);
  xen_domctl_getdomaininfo info;
  domid_t reported = 0;
  test.check("getdomaininfo of 999 reports the next one up", get_info(999, info, &reported), 0);
  test.check("... domain 1000", reported, 1000);
  test.check("destroydomain of 1000", destroy(1000), 0);
}

// Ours: the domain table has 32 slots; a free id with no free slot is -ENOMEM (Xen's
// alloc_domain_struct), and every slot comes back.
void table_full(SelfTest& test, uint64_t baseline_free, long baseline_domains) {
  static domid_t ids[64];
  unsigned created = 0;
  long rc = 0;
  while (created < 64 && (rc = create(control::pv_domain_config(), 0, ids[created])) == 0) ++created;
  test.check("createdomain until the table is full: 31 beside dom0", created, 31);
  test.check("... then -ENOMEM", rc, -XEN_ENOMEM);
  unsigned destroyed = 0;
  for (unsigned i = 0; i < created; ++i) destroyed += destroy(ids[i]) == 0;
  test.check("... all destroyed", destroyed, created);
  test.check("... free pages back at their baseline", long(free_pages_settled(baseline_free)), long(baseline_free));
  test.check("... domain count back at its baseline", domain_count(), baseline_domains);
}

void cycles(SelfTest& test, uint64_t baseline_free, long baseline_domains, unsigned count = kCycles) {
  unsigned created = 0, destroyed = 0;
  const uint64_t start_ns = system_time_ns();
  for (unsigned i = 0; i < count; ++i) {
    domid_t id = 0;
    if (create(control::pv_domain_config(), 0, id) != 0) break;
    ++created;
    xen_domctl_t op = domctl_request(XEN_DOMCTL_max_vcpus, id);
    op.u.max_vcpus.max = 1;
    if (domctl(op) != 0) break;
    if (destroy(id) != 0) break;
    ++destroyed;
  }
  test.note("create/max_vcpus/destroy cycles", count);
  test.note("... microseconds per cycle", long((system_time_ns() - start_ns) / 1000 / (count ? count : 1)));
  test.check("... all created", created, count);
  test.check("... all destroyed", destroyed, count);
  test.check("... free pages back at their baseline", long(free_pages_settled(baseline_free)), long(baseline_free));
  test.check("... domain count back at its baseline", domain_count(), baseline_domains);
  if (on_ours()) test.check("... frame audit clean", sys_pvhv_audit(), 0);
}

// What a dying domain may still be given, with Xen 4.17's is_dying rules: a domain destroyed
// while dom0 maps one of its frames stays, dead, until dom0 lets go; meanwhile it gets no new
// memory (assign_pages: 0 extents), no port (get_free_port: -EINVAL), and a pin on its behalf is
// dropped at once (do_mmuext_op: rc 0, not pinned). Once dom0 unmaps the frame it is gone with
// all its memory, and a new domain with the same id starts clean: nothing the dead one was
// given is left for it to take (ours faulted at that domain's destroy when it was).
void dead_but_held(SelfTest& test, uint64_t baseline_free, long baseline_domains) {
  domid_t id = 0;
  test.check("createdomain of a domain to hold and destroy", create(control::pv_domain_config(), 0, id), 0);
  xen_domctl_t op = domctl_request(XEN_DOMCTL_max_vcpus, id);
  op.u.max_vcpus.max = 1;
  test.check("... max_vcpus 1", domctl(op), 0);
  test.check("XENMEM_maximum_gpfn of a domain with no memory: 0 (its shared_info's max_pfn is 0)", maximum_gpfn(id), 0);
  test.check("... max_mem 4 MiB", max_mem(id, 4096), 0);
  long rc = 0;
  const uint64_t held = populate_one(id, rc);
  test.check("... populate_physmap of one page", rc, 1);
  if (!held) return;
  test.check("XENMEM_maximum_gpfn with one page: still 0 (max_pfn, not tot_pages)", maximum_gpfn(id), 0);
  test.check("dom0 maps that page (foreigndom = the domain)", map_foreign_read_only(id, held), 0);
  test.check("destroydomain of it", destroy(id), 0);
  xen_domctl_getdomaininfo info;
  domid_t reported = id;
  rc = get_info(id, info, &reported);
  test.check("... still there while dom0 maps its page", rc == 0 && reported == id, true);
  test.check("... dead: XEN_DOMINF_dying", flag(info, XEN_DOMINF_dying), true);
  test.check("... one page left", long(info.tot_pages), 1);

  const uint64_t given = populate_one(id, rc);
  test.check("populate_physmap for the dead domain: 0 extents (assign_pages refuses a dying domain)", rc, 0);
  test.check("increase_reservation for it: 0 extents", increase_one(id), 0);
  evtchn_alloc_unbound_t alloc{};
  alloc.dom = id;
  alloc.remote_dom = 0;
  test.check("EVTCHNOP_alloc_unbound in the dead domain: -EINVAL (get_free_port)",
             xen::event_channel_op(EVTCHNOP_alloc_unbound, &alloc), -XEN_EINVAL);
  evtchn_bind_interdomain_t bind{};
  bind.remote_dom = id;
  bind.remote_port = alloc.port ? alloc.port : 1;
  test.check("EVTCHNOP_bind_interdomain to a port of the dead domain: -EINVAL",
             xen::event_channel_op(EVTCHNOP_bind_interdomain, &bind), -XEN_EINVAL);
  test.check("pinning the held page as its L1 (foreigndom = the dead domain): 0, dropped at once",
             mmuext_for(id, MMUEXT_PIN_L1_TABLE, held), 0);
  test.check("... unpinning it: -EINVAL (it is not pinned)", mmuext_for(id, MMUEXT_UNPIN_TABLE, held), -XEN_EINVAL);
  test.check("dom0 maps the held page a second time (foreigndom = the dead domain): 0",
             map_foreign_read_only(id, held, 1), 0);
  test.check("max_mem of the dead domain: 0 (only the limit changes)", max_mem(id, 8192), 0);
  get_info(id, info);
  test.check("... still one page", long(info.tot_pages), 1);
  if (on_ours()) test.check("... frame audit clean while it is held", sys_pvhv_audit(), 0);
  test.check("decrease_reservation of the held page for the dead domain: 1 (freed when dom0 lets go)",
             decrease_one(id, held), 1);
  get_info(id, info);
  test.check("... still one page while mapped", long(info.tot_pages), 1);
  unmap_foreign(1);
  unmap_foreign(0);
  check_destroyed(test, id, baseline_free, baseline_domains, "dom0 unmapped it: the dead domain is gone");

  domid_t again = 0;
  test.check("createdomain with the same id again", create(control::pv_domain_config(), id, again), 0);
  test.check("... that id", again, id);
  test.check("... max_mem", max_mem(id, 4096), 0);
  populate_one(id, rc);
  test.check("... populate_physmap of one page", rc, 1);
  if (given)
    test.check("decrease_reservation of the page the dead domain was given: 0 extents", decrease_one(id, given), 0);
  get_info(id, info);
  test.check("... its tot_pages 1", long(info.tot_pages), 1);
  test.check("destroydomain of the new domain", destroy(id), 0);
  check_destroyed(test, id, baseline_free, baseline_domains, "... gone from getdomaininfo");
}
}  // namespace

void selftest_lifecycle(SelfTest& test) {
  const uint64_t baseline_free = free_pages();
  const long baseline_domains = domain_count();
  test.note("free pages before", long(baseline_free));
  test.check("one domain to start with", baseline_domains, 1);
  // The shared_info page can never become a page table: the hypervisor rewrites it unchecked.
  const Mfn shared_info_frame{boot_info.start_info->shared_info >> 12};
  test.check("pinning dom0's own shared_info page as an L1: -EINVAL", pv::ops.pin(Level::l1, shared_info_frame),
             -XEN_EINVAL);
  test.check("... as an L4: -EINVAL", pv::ops.pin(Level::l4, shared_info_frame), -XEN_EINVAL);
  bad_creations(test);
  test.check("refused creations took nothing", long(free_pages_settled(baseline_free)), long(baseline_free));
  test.check("... and left no domain", domain_count(), baseline_domains);

  domid_t id = 0;
  test.check("createdomain with domid 0 (the next free id)", create(control::pv_domain_config(), 0, id), 0);
  test.check("... an ordinary id came back in op->domain", id > 0 && id < DOMID_FIRST_RESERVED, true);
  domid_t again = 0;
  test.check("createdomain with that id: -EEXIST", create(control::pv_domain_config(), id, again), -XEN_EEXIST);
  domid_t reserved_pick = 0;
  test.check("createdomain with DOMID_SELF (reserved: the next free id)",
             create(control::pv_domain_config(), DOMID_SELF, reserved_pick), 0);
  test.check("... another ordinary id",
             reserved_pick != id && reserved_pick > 0 && reserved_pick < DOMID_FIRST_RESERVED, true);
  test.check("... destroyed", destroy(reserved_pick), 0);
  test.check("domain count: dom0 and the new one", domain_count(), baseline_domains + 1);

  new_domain_as_reported(test, id);
  pause_and_unpause(test, id);
  before_a_context(test, id);
  with_a_context(test, id);

  test.check("destroydomain of dom0 itself: -EINVAL", destroy(0), -XEN_EINVAL);
  test.check("destroydomain of a domain that does not exist: -ESRCH", destroy(kAbsent), -XEN_ESRCH);
  test.check("destroydomain of the new domain", destroy(id), 0);
  check_destroyed(test, id, baseline_free, baseline_domains, "... gone from getdomaininfo");
  test.check("destroydomain of it again: -ESRCH", destroy(id), -XEN_ESRCH);
  sparse_ids(test);
  if (on_ours()) table_full(test, baseline_free, baseline_domains);
  cycles(test, baseline_free, baseline_domains);
  dead_but_held(test, baseline_free, baseline_domains);
}

// The 100-cycle loop (by hand: make test runs the 10 of selftest=lifecycle).
void selftest_lifecycle_100(SelfTest& test) {
  const uint64_t baseline_free = free_pages();
  const long baseline_domains = domain_count();
  test.note("free pages before", long(baseline_free));
  cycles(test, baseline_free, baseline_domains, 100);
  test.note("free pages after", long(free_pages()));
}

// Whether the hypervisor's console ring (readconsole) holds `needle`: how dom0 sees a domU's
// progress without a console backend.
bool console_ring_has(const char* needle) {
  static char text[16384];
  xen_sysctl_t op{};
  op.cmd = XEN_SYSCTL_readconsole;
  op.interface_version = XEN_SYSCTL_INTERFACE_VERSION;
  op.u.readconsole.count = sizeof(text);
  set_xen_guest_handle(op.u.readconsole.buffer, text);
  if (sysctl(op) != 0) return false;
  const uint32_t length = op.u.readconsole.count;
  uint32_t needle_length = 0;
  while (needle[needle_length]) ++needle_length;
  for (uint32_t at = 0; at + needle_length <= length; ++at)
    if (__builtin_memcmp(text + at, needle, needle_length) == 0) return true;
  return false;
}

// dom0 beside the boot domain 1: destroyed while it runs.
void selftest_lifecycle_domu(SelfTest& test) {
  constexpr domid_t domu = 1;
  xen_domctl_getdomaininfo info;
  test.check("getdomaininfo of domain 1", get_info(domu, info), 0);
  // Let it run its selftest, then a little of the fork test: destroyed in the middle of things.
  bool selftest_done = false;
  for (unsigned i = 0; i < 1000 && !selftest_done; ++i) {
    sleep_until(system_time_ns() + 10'000'000);
    selftest_done = console_ring_has("(d1) selftest lifecycle-unprivileged: passed") ||
                    console_ring_has("(d1) selftest lifecycle-unprivileged: failed");
  }
  test.check("... domain 1 ran its selftest (seen in the console ring)", selftest_done, true);
  get_info(domu, info);
  const uint64_t then = info.cpu_time;
  // A few ms of the fork test, not more: the whole of it now takes only tens of ms, and it must
  // still be running when it is destroyed.
  for (unsigned i = 0; i < 500 && info.cpu_time < then + 3'000'000; ++i) {
    sleep_until(system_time_ns() + 1'000'000);
    get_info(domu, info);
  }
  test.check("... and runs on", info.cpu_time > then, true);
  // Its vCPU context as the boot builder set it up and the domain has run with it since.
  static vcpu_guest_context context;
  test.check("getvcpucontext of domain 1", vcpu_context(XEN_DOMCTL_getvcpucontext, domu, 0, &context), 0);
  test.check("... online", long(context.flags & VGCF_online), VGCF_online);
  test.check("... an L4 in ctrlreg[3]", context.ctrlreg[3] != 0 && (context.ctrlreg[3] & 0xfff) == 0, true);
  test.check("... selectors with RPL 3", long(context.user_regs.cs & context.user_regs.ss & 3), 3);
  test.check("... a canonical rip", long(context.user_regs.rip >> 47 == 0 || context.user_regs.rip >> 47 == 0x1ffff),
             1);
  const uint64_t l4 = context.ctrlreg[3];
  context.ctrlreg[3] = l4 + 4096;
  test.check("setvcpucontext with another L4 on its initialised vCPU: -EOPNOTSUPP",
             vcpu_context(XEN_DOMCTL_setvcpucontext, domu, 0, &context), -XEN_EOPNOTSUPP);
  context.ctrlreg[3] = l4;
  test.check("hypercall_init into its L4: -EPERM (a page table cannot be writable)", hypercall_init(domu, l4 >> 12),
             -XEN_EPERM);
  const uint64_t before = free_pages();
  const long domains_before = domain_count();
  test.note("its tot_pages", long(info.tot_pages));
  // dom0 holds one of its frames (its shared_info page, mapped with foreigndom 1): the domain
  // dies but stays, dead, until dom0 lets the frame go.
  const uint64_t held = info.shared_info_frame;
  test.check("dom0 maps domain 1's shared_info page (foreigndom 1)", map_foreign_read_only(domu, held), 0);
  // A timer due in 300 us: its interrupt is pending while the teardown runs, so destroydomain
  // stops part way and is continued (the summary's hypercall_continuations counts it).
  const uint64_t destroy_start = system_time_ns();
  xen::set_timer(destroy_start + 300'000);
  test.check("destroydomain of domain 1 while it runs", destroy(domu), 0);
  test.note("... microseconds it took", long((system_time_ns() - destroy_start) / 1000));
  domid_t reported = domu;
  long rc = get_info(domu, info, &reported);
  test.check("... still there while dom0 maps its frame", rc == 0 && reported == domu, true);
  test.check("... dead: XEN_DOMINF_dying", flag(info, XEN_DOMINF_dying), true);
  test.check("... not reported shut down", flag(info, XEN_DOMINF_shutdown), false);
  test.check("... the one frame left", long(info.tot_pages), 1);
  test.check("... no vCPU online", info.nr_online_vcpus, 0);
  test.check("destroydomain of it again while held: 0", destroy(domu), 0);
  test.check("... still there", domain_count(), domains_before);
  test.check("... frame audit clean while it is held", sys_pvhv_audit(), 0);
  unmap_foreign();
  rc = get_info(domu, info, &reported);  // the first domctl after the unmap finds the domain's last frame free
  const uint64_t after = free_pages();
  test.check("... gone from getdomaininfo", rc == -XEN_ESRCH || (rc == 0 && reported != domu), true);
  test.check("... one domain fewer", domain_count(), domains_before - 1);
  // The hypervisor says how many frames it gave back; the test compares.
  print("selftest lifecycle-domu: frames back: %lu\n", after - before);
  test.check("... frames came back, the held one too", after > before, true);
  test.check("... frame audit clean", sys_pvhv_audit(), 0);
  test.check("destroydomain of it again: -ESRCH", destroy(domu), -XEN_ESRCH);
}

void selftest_lifecycle_unprivileged(SelfTest& test) {
  domid_t id = 0;
  xen_domctl_t op = domctl_request(XEN_DOMCTL_createdomain, 0);
  op.u.createdomain = control::pv_domain_config();
  op.interface_version = XEN_DOMCTL_INTERFACE_VERSION + 1;
  test.check("createdomain with a stale interface version: -EACCES", domctl(op), -XEN_EACCES);
  test.check("createdomain by a domU: -EPERM", create(control::pv_domain_config(), 0, id), -XEN_EPERM);
  test.check("destroydomain of dom0 by a domU: -EPERM", destroy(0), -XEN_EPERM);
  test.check("destroydomain of itself by a domU: -EPERM (privilege first)", destroy(1), -XEN_EPERM);
  test.check("destroydomain of a domain that does not exist: -ESRCH first", destroy(kAbsent), -XEN_ESRCH);
  test.check("setvcpucontext of dom0 by a domU: -EPERM", vcpu_context(XEN_DOMCTL_setvcpucontext, 0, 0, &context_buffer),
             -XEN_EPERM);
  test.check("getvcpucontext of dom0 by a domU: -EPERM", vcpu_context(XEN_DOMCTL_getvcpucontext, 0, 0, &context_buffer),
             -XEN_EPERM);
  test.check("hypercall_init by a domU: -EPERM", hypercall_init(0, 0), -XEN_EPERM);
  uint32_t size = 64;
  test.check("set_address_size by a domU: -EPERM", address_size(XEN_DOMCTL_set_address_size, 1, size), -XEN_EPERM);
}
}  // namespace kernel
