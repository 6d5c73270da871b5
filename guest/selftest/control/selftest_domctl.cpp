// The control hypercalls as a toolstack sees them, with Xen 4.17's structures (domctl.h,
// sysctl.h, interface version 0x15) and the answers Xen 4.17 gives (xen/common/domctl.c,
// sysctl.c, domain.c, drivers/char/console.c):
//
// selftest=domctl, in dom0 alone (run on ours and on Xen 4.17):
//  - domctl: a bad pointer is -EFAULT, a stale interface version -EACCES, a sub-op Xen does
//    not know -ENOSYS (arch_do_domctl), a domain that does not exist -ESRCH (before anything
//    else is looked at); getdomaininfo of itself field by field (flags, the never-set shutdown
//    code 0xffff in bits 16..31, pages, shared_info frame, cpu time, vCPUs, handle, pool), of
//    a reserved id -EINVAL, of an id above every domain -ESRCH, its copy back into a read-only
//    page -EFAULT; pausing itself -EINVAL, unpausing itself (never paused) -EINVAL; max_vcpus
//    on itself -EINVAL; max_mem (kilobytes to pages, down below what it holds, back up);
//    setdomainhandle; getvcpuinfo (vCPU 1 -EINVAL).
//  - sysctl: getdomaininfolist (the same info, first_domain, max_domains, a bad buffer),
//    physinfo (one CPU, its frequency as the guest's own clock says, RAM, free frames that
//    really drop when the trace buffers take some), sched_id (credit2), readconsole (the
//    hypervisor's lines without dom0's own output, partial and incremental reads, an index
//    outside the ring, clear, a bad buffer).
//
// selftest=domctl-domu, in dom0 beside the domain built at boot as domain 1 (ours only: Xen
// 4.17 builds no domU at boot): getdomaininfo and getdomaininfolist of both, max_vcpus and
// getvcpuinfo of the domU, pausing it (nested, up to Xen's 255, then -EOVERFLOW) so that it
// is not scheduled while paused, unpausing it, and at last its shutdown as getdomaininfo
// reports it, and the console ring with the domU's lines, wrapped around.
//
// selftest=domctl-leave-paused, in dom0 beside domain 1: pauses it and leaves it paused, so the
// machine must still end when dom0 does (no domain is left that could unpause it).
//
// selftest=domctl-unprivileged, in that domU: every domctl and sysctl is -EPERM after the
// interface-version check, but a domain that does not exist is -ESRCH first (do_domctl looks
// it up before the XSM check), except for getdomaininfo, which needs no domain. It then prints
// 20 KiB of lines, so that dom0 finds the hypervisor's console ring wrapped around.
#define __XEN_TOOLS__ 1  // domctl.h and sysctl.h are the tools' interface (guest handles need it)
#include <stdint.h>
#include <xen/xen.h>
#include <xen/domctl.h>
#include <xen/sysctl.h>

#include "arch/hypercall.h"
#include "arch/xen.h"
#include "kernel/boot/boot_info.h"
#include "kernel/console/console.h"
#include "arch/control.h"
#include "kernel/memory/physical_memory.h"
#include "selftest/control/control_selftests.h"
#include "pv-kernel-patches/shared_info.h"
#include "kernel/events/time.h"
#include "kernel/events/timer.h"
#include "kernel/measurement/trace_capture.h"
#include "lib/cmdline.h"

namespace kernel {
namespace {
using namespace control;
constexpr uint64_t kUnmappedUser = 0x0000000010000000ull;  // nothing is mapped there before init
constexpr domid_t kAbsent = 5;                             // no domain has this id in these tests
constexpr domid_t kDomU = 1;                               // the first domain built at boot
constexpr uint32_t kUnknownDomctl = 0x7777;
// Xen's SHUTDOWN_CODE_INVALID (~0u) shifted into the flags: their upper half is all ones, and
// the code as tools read it (masked with XEN_DOMINF_shutdownmask) is 255.
constexpr uint32_t kNeverShutDown = 0xffff;

long get_vcpu_info(domid_t domain, uint32_t vcpu, xen_domctl_getvcpuinfo& info) {
  xen_domctl_t op = domctl_request(XEN_DOMCTL_getvcpuinfo, domain);
  op.u.getvcpuinfo.vcpu = vcpu;
  long rc = domctl(op);
  info = op.u.getvcpuinfo;
  return rc;
}

long set_handle(domid_t domain, const uint8_t (&handle)[16]) {
  xen_domctl_t op = domctl_request(XEN_DOMCTL_setdomainhandle, domain);
  for (unsigned i = 0; i < 16; ++i) op.u.setdomainhandle.handle[i] = handle[i];
  return domctl(op);
}

long pause(domid_t domain) { return simple_domctl(XEN_DOMCTL_pausedomain, domain); }
long unpause(domid_t domain) { return simple_domctl(XEN_DOMCTL_unpausedomain, domain); }

long info_list(uint32_t first, uint32_t max, xen_domctl_getdomaininfo* buffer, uint32_t& found) {
  xen_sysctl_t op = sysctl_request(XEN_SYSCTL_getdomaininfolist);
  op.u.getdomaininfolist.first_domain = first;
  op.u.getdomaininfolist.max_domains = max;
  set_xen_guest_handle(op.u.getdomaininfolist.buffer, buffer);
  long rc = sysctl(op);
  found = op.u.getdomaininfolist.num_domains;
  return rc;
}

long info_list_at(uint32_t first, uint32_t max, uint64_t buffer) {
  xen_sysctl_t op = sysctl_request(XEN_SYSCTL_getdomaininfolist);
  op.u.getdomaininfolist.first_domain = first;
  op.u.getdomaininfolist.max_domains = max;
  op.u.getdomaininfolist.buffer.p = reinterpret_cast<xen_domctl_getdomaininfo_t*>(buffer);
  return sysctl(op);
}

uint32_t shutdown_code(const xen_domctl_getdomaininfo& info) {
  return (info.flags >> XEN_DOMINF_shutdownshift) & XEN_DOMINF_shutdownmask;
}
bool flag(const xen_domctl_getdomaininfo& info, uint32_t bit) { return (info.flags & bit) != 0; }

long xenmem_reservation(unsigned command) {
  domid_t self = DOMID_SELF;
  return xen::memory_op(command, &self);
}

void sleep_ms(uint64_t ms) { sleep_until(system_time_ns() + ms * 1'000'000); }

// ---------------------------------------------------------------------------------------------
// dom0 alone

void domctl_bad_requests(SelfTest& test) {
  test.check("domctl from a null pointer returns -EFAULT", domctl_at(0), -XEN_EFAULT);
  test.check("domctl from an unmapped pointer returns -EFAULT", domctl_at(kUnmappedUser), -XEN_EFAULT);
  xen_domctl_t op = domctl_request(XEN_DOMCTL_getdomaininfo, 0);
  op.interface_version = XEN_DOMCTL_INTERFACE_VERSION - 1;
  test.check("domctl with the previous interface version returns -EACCES", domctl(op), -XEN_EACCES);
  op.interface_version = XEN_DOMCTL_INTERFACE_VERSION + 1;
  test.check("domctl with the next interface version returns -EACCES", domctl(op), -XEN_EACCES);
  test.check("domctl with a sub-op Xen does not know returns -ENOSYS", simple_domctl(kUnknownDomctl, 0), -XEN_ENOSYS);
  test.check("... on a domain that does not exist: -ESRCH first", simple_domctl(kUnknownDomctl, kAbsent), -XEN_ESRCH);
  test.check("domctl naming DOMID_SELF returns -ESRCH (ids only)", simple_domctl(XEN_DOMCTL_pausedomain, DOMID_SELF),
             -XEN_ESRCH);
}

void getdomaininfo_of_dom0(SelfTest& test) {
  const start_info_t* si = boot_info.start_info;
  xen_domctl_getdomaininfo info;
  domid_t reported = 0xffff;
  test.check("getdomaininfo of dom0", get_info(0, info, &reported), 0);
  test.check("... echoes the domain in domctl.domain", reported, 0);
  test.check("... and in the info", info.domain, 0);
  test.check("... running (the caller's vCPU)", flag(info, XEN_DOMINF_running), true);
  test.check("... not blocked", flag(info, XEN_DOMINF_blocked), false);
  test.check("... not paused, shut down, dying or HVM",
             flag(info, XEN_DOMINF_paused | XEN_DOMINF_shutdown | XEN_DOMINF_dying | XEN_DOMINF_hvm_guest), false);
  test.check("... shutdown code never set (0xffff in the flags' upper half)", info.flags >> XEN_DOMINF_shutdownshift,
             kNeverShutDown);
  test.check("... which tools read as code 255", shutdown_code(info), XEN_DOMINF_shutdownmask);
  test.note("flags", info.flags);
  test.check("... tot_pages is start_info's nr_pages", long(info.tot_pages), long(si->nr_pages));
  test.check("... tot_pages is XENMEM_current_reservation", long(info.tot_pages),
             xenmem_reservation(XENMEM_current_reservation));
  test.check("... max_pages is XENMEM_maximum_reservation", long(info.max_pages),
             xenmem_reservation(XENMEM_maximum_reservation));
  test.check("... max_pages without dom0_mem=max: is Xen's unlimited 2^32 - 1", long(info.max_pages), 0xffffffffl);
  test.check("... shared_info_frame is start_info's shared_info frame", long(info.shared_info_frame),
             long(si->shared_info >> 12));
  test.check("... one vCPU online", info.nr_online_vcpus, 1);
  test.check("... max_vcpu_id 0", info.max_vcpu_id, 0);
  test.check("... ssidref 0 (no XSM policy)", info.ssidref, 0);
  test.check("... cpupool 0", info.cpupool, 0);
  bool zero_handle = true;
  for (uint8_t byte : info.handle) zero_handle = zero_handle && byte == 0;
  test.check("... handle all zeros", zero_handle, true);
  test.check("... no outstanding, shared or paged pages",
             long(info.outstanding_pages | info.shr_pages | info.paged_pages), 0);
  test.check("... cpu_time counts", info.cpu_time > 0, true);
  test.note("gpaddr_bits", info.gpaddr_bits);
  test.check("... gpaddr_bits within 32..52", info.gpaddr_bits >= 32 && info.gpaddr_bits <= 52, true);
  uint64_t before = info.cpu_time;
  for (unsigned spin = 0; spin < 2'000'000; ++spin) asm volatile("" ::: "memory");
  get_info(0, info);
  test.check("... cpu_time grows while dom0 runs", info.cpu_time > before, true);
}

void getdomaininfo_search(SelfTest& test) {
  xen_domctl_getdomaininfo info;
  test.check("getdomaininfo of domain 1 with only dom0: -ESRCH (nothing at or above)", get_info(1, info), -XEN_ESRCH);
  test.check("getdomaininfo of the last ordinary id: -ESRCH", get_info(DOMID_FIRST_RESERVED - 1, info), -XEN_ESRCH);
  test.check("getdomaininfo of DOMID_SELF: -EINVAL (a reserved id)", get_info(DOMID_SELF, info), -XEN_EINVAL);
  test.check("getdomaininfo of DOMID_IDLE: -EINVAL", get_info(DOMID_IDLE, info), -XEN_EINVAL);
  test.check("getdomaininfo of DOMID_INVALID: -EINVAL", get_info(DOMID_INVALID, info), -XEN_EINVAL);
}

// A page of the kernel image made read-only for one call: copy-in works, copy-back faults.
alignas(4096) uint8_t read_only_page[4096];

long domctl_from_read_only(const xen_domctl_t& op) {
  __builtin_memcpy(read_only_page, &op, sizeof(op));
  const uint64_t va = reinterpret_cast<uint64_t>(read_only_page);
  pv::PageTableSlot slot;
  if (!walk(kernel_l4(), va, Level::l1, slot)) return 1;
  const uint64_t writable = read_entry(slot).raw();
  const uint64_t read_only = writable & ~uint64_t(PageTableEntry::kWritable);
  if (pv::ops.raw_mmu_update(slot.machine_address, read_only) || pv::ops.invalidate_page(va)) return 2;
  long rc = domctl_at(va);
  pv::ops.raw_mmu_update(slot.machine_address, writable);
  pv::ops.invalidate_page(va);
  return rc;
}

void copy_back_fault(SelfTest& test) {
  test.check("getdomaininfo into a read-only request: copy back fails with -EFAULT",
             domctl_from_read_only(domctl_request(XEN_DOMCTL_getdomaininfo, 0)), -XEN_EFAULT);
  test.check("max_mem from a read-only request: no copy back, 0", domctl_from_read_only([] {
               xen_domctl_t op = domctl_request(XEN_DOMCTL_max_mem, 0);
               op.u.max_mem.max_memkb = ~0ull;
               return op;
             }()),
             0);
}

void pause_self(SelfTest& test) {
  test.check("pausedomain of itself returns -EINVAL", pause(0), -XEN_EINVAL);
  test.check("unpausedomain of itself (not paused) returns -EINVAL", unpause(0), -XEN_EINVAL);
  test.check("pausedomain of a domain that does not exist returns -ESRCH", pause(kAbsent), -XEN_ESRCH);
  test.check("unpausedomain of a domain that does not exist returns -ESRCH", unpause(kAbsent), -XEN_ESRCH);
  xen_domctl_getdomaininfo info;
  get_info(0, info);
  test.check("... dom0 is not paused", flag(info, XEN_DOMINF_paused), false);
}

void memory_limits(SelfTest& test) {
  xen_domctl_getdomaininfo info;
  get_info(0, info);
  const uint64_t original = info.max_pages;
  test.check("max_mem 200 MiB", max_mem(0, 200 * 1024), 0);
  get_info(0, info);
  test.check("... max_pages is 51200", long(info.max_pages), 51200);
  test.check("... XENMEM_maximum_reservation says so", xenmem_reservation(XENMEM_maximum_reservation), 51200);
  test.check("max_mem below what dom0 holds is accepted (it may ratchet down)", max_mem(0, 4095), 0);
  get_info(0, info);
  test.check("... max_pages 1023 (kilobytes rounded down to pages)", long(info.max_pages), 1023);
  test.check("... tot_pages unchanged", long(info.tot_pages), long(boot_info.start_info->nr_pages));
  test.check("max_mem of all ones", max_mem(0, ~0ull), 0);
  get_info(0, info);
  test.check("... max_pages kept to 32 bits", long(info.max_pages), 0xffffffffl);
  test.check("max_mem back to the original", max_mem(0, original << 2), 0);
  get_info(0, info);
  test.check("... max_pages restored", long(info.max_pages), long(original));
  test.check("max_mem of a domain that does not exist returns -ESRCH", max_mem(kAbsent, 1024), -XEN_ESRCH);
}

void vcpus(SelfTest& test) {
  test.check("max_vcpus on itself returns -EINVAL", max_vcpus(0, 1), -XEN_EINVAL);
  test.check("max_vcpus of a domain that does not exist returns -ESRCH", max_vcpus(kAbsent, 1), -XEN_ESRCH);
  xen_domctl_getvcpuinfo vcpu;
  test.check("getvcpuinfo of dom0's vCPU 0", get_vcpu_info(0, 0, vcpu), 0);
  test.check("... online", vcpu.online, 1);
  test.check("... running", vcpu.running, 1);
  test.check("... not blocked", vcpu.blocked, 0);
  test.check("... on CPU 0", vcpu.cpu, 0);
  xen_domctl_getdomaininfo info;
  get_info(0, info);
  test.check("... its cpu_time is at most the domain's, read later",
             vcpu.cpu_time > 0 && vcpu.cpu_time <= info.cpu_time, true);
  test.check("getvcpuinfo of vCPU 1 (beyond max_vcpus) returns -EINVAL", get_vcpu_info(0, 1, vcpu), -XEN_EINVAL);
  test.check("getvcpuinfo of a huge vCPU number returns -EINVAL", get_vcpu_info(0, 0xffffffffu, vcpu), -XEN_EINVAL);
  test.check("getvcpuinfo of a domain that does not exist returns -ESRCH", get_vcpu_info(kAbsent, 0, vcpu), -XEN_ESRCH);
}

void domain_handle(SelfTest& test) {
  uint8_t handle[16];
  for (unsigned i = 0; i < 16; ++i) handle[i] = uint8_t(0xa0 + i);
  test.check("setdomainhandle of dom0", set_handle(0, handle), 0);
  xen_domctl_getdomaininfo info;
  get_info(0, info);
  test.check("... getdomaininfo reports it", __builtin_memcmp(info.handle, handle, 16) == 0, true);
  const uint8_t zeros[16] = {};
  test.check("setdomainhandle back to zeros", set_handle(0, zeros), 0);
  test.check("setdomainhandle of a domain that does not exist returns -ESRCH", set_handle(kAbsent, zeros), -XEN_ESRCH);
}

void domain_list(SelfTest& test) {
  xen_domctl_getdomaininfo list[4];
  uint32_t found = 99;
  test.check("getdomaininfolist from 0", info_list(0, 4, list, found), 0);
  test.check("... one domain", found, 1);
  test.check("... dom0", list[0].domain, 0);
  xen_domctl_getdomaininfo single;
  get_info(0, single);
  test.check("... with getdomaininfo's flags and pages",
             list[0].flags == single.flags && list[0].tot_pages == single.tot_pages &&
                 list[0].shared_info_frame == single.shared_info_frame,
             true);
  test.check("getdomaininfolist from 1", info_list(1, 4, list, found), 0);
  test.check("... none", found, 0);
  test.check("getdomaininfolist of at most 0", info_list(0, 0, list, found), 0);
  test.check("... none", found, 0);
  test.check("getdomaininfolist into an unmapped buffer returns -EFAULT", info_list_at(0, 4, kUnmappedUser),
             -XEN_EFAULT);
  test.check("getdomaininfolist of at most 0 into an unmapped buffer: nothing copied, 0",
             info_list_at(0, 0, kUnmappedUser), 0);
}

// The guest's own view of the TSC frequency, from the scale in its vcpu_time_info.
uint64_t guest_tsc_khz() {
  const vcpu_time_info_t& time = shared_info()->vcpu_info[0].time;
  uint64_t khz = (1'000'000ull << 32) / time.tsc_to_system_mul;
  return time.tsc_shift >= 0 ? khz >> time.tsc_shift : khz << -time.tsc_shift;
}

long physinfo(xen_sysctl_physinfo& info) {
  xen_sysctl_t op = sysctl_request(XEN_SYSCTL_physinfo);
  long rc = sysctl(op);
  info = op.u.physinfo;
  return rc;
}

void machine_info(SelfTest& test) {
  xen_sysctl_physinfo info;
  test.check("physinfo", physinfo(info), 0);
  test.check("... one CPU online", info.nr_cpus, 1);
  test.check("... one thread per core, one core per socket", info.threads_per_core == 1 && info.cores_per_socket == 1,
             true);
  test.note("max_cpu_id", info.max_cpu_id);
  test.check("... max_cpu_id covers the online CPUs", info.max_cpu_id + 1 >= info.nr_cpus, true);
  test.check("... one NUMA node", info.nr_nodes, 1);
  test.note("max_node_id", info.max_node_id);
  test.note("cpu_khz", info.cpu_khz);
  uint64_t own = guest_tsc_khz();
  test.note("the guest's TSC kHz", long(own));
  test.check("... cpu_khz within 1% of the guest's TSC frequency",
             info.cpu_khz > 0 && info.cpu_khz * 100 >= own * 99 && info.cpu_khz * 100 <= own * 101, true);
  test.note("total_pages", long(info.total_pages));
  test.check("... total_pages: the 512 MiB machine's RAM less firmware holes",
             info.total_pages > 126000 && info.total_pages <= 131072, true);
  test.note("free_pages", long(info.free_pages));
  test.check("... free_pages: some, and with dom0's not more than the RAM",
             info.free_pages > 0 && info.free_pages + boot_info.start_info->nr_pages <= info.total_pages, true);
  test.check("... scrub_pages 0", long(info.scrub_pages), 0);
  test.check("... outstanding_pages 0", long(info.outstanding_pages), 0);
  test.note("max_mfn", long(info.max_mfn));
  test.check("... max_mfn at least the RAM's last frame", info.max_mfn + 1 >= info.total_pages, true);
  test.note("capabilities", info.capabilities);
  test.check("... PV capable", (info.capabilities & XEN_SYSCTL_PHYSCAP_pv) != 0, true);
  test.check("... not HVM capable (no VMX under TCG)", (info.capabilities & XEN_SYSCTL_PHYSCAP_hvm) != 0, false);
  test.note("hw_cap[0] (CPUID 1 EDX)", info.hw_cap[0]);
  test.check("... hw_cap[0] has FPU and SSE", (info.hw_cap[0] & 1) && (info.hw_cap[0] & (1u << 25)), true);

  // The count is the allocator's: the trace buffers' frames (4 per CPU and t_info) leave it.
  test.check("tbuf_op set_size 4 (takes frames)", trace_capture::tbuf_op(XEN_SYSCTL_TBUFOP_set_size, 4), 0);
  xen_sysctl_physinfo after;
  physinfo(after);
  test.note("free pages taken by the trace buffers", long(info.free_pages - after.free_pages));
  test.check("... free_pages dropped by at least the 4 buffer pages",
             info.free_pages >= after.free_pages + 4 && info.free_pages <= after.free_pages + 64, true);
  trace_capture::tbuf_op(XEN_SYSCTL_TBUFOP_disable, 0);
}

void scheduler_id(SelfTest& test) {
  xen_sysctl_t op = sysctl_request(XEN_SYSCTL_sched_id);
  test.check("sched_id", sysctl(op), 0);
  test.check("... credit2 (Xen 4.17's default)", op.u.sched_id.sched_id, XEN_SCHEDULER_CREDIT2);
}

// ---- readconsole

char console_text[16384];
char console_again[16384];

struct ConsoleRead {
  long rc;
  uint32_t count, index;
};

ConsoleRead read_console(char* buffer, uint32_t count, bool incremental = false, uint32_t index = 0,
                         bool clear = false) {
  xen_sysctl_t op = sysctl_request(XEN_SYSCTL_readconsole);
  op.u.readconsole.clear = clear;
  op.u.readconsole.incremental = incremental;
  op.u.readconsole.index = index;
  op.u.readconsole.count = count;
  set_xen_guest_handle(op.u.readconsole.buffer, buffer);
  ConsoleRead read{sysctl(op), op.u.readconsole.count, op.u.readconsole.index};
  return read;
}

bool contains(const char* text, uint32_t length, const char* needle) {
  uint32_t n = 0;
  while (needle[n]) ++n;
  for (uint32_t i = 0; i + n <= length; ++i)
    if (__builtin_memcmp(text + i, needle, n) == 0) return true;
  return false;
}

bool same_bytes(const char* a, const char* b, uint32_t length) { return __builtin_memcmp(a, b, length) == 0; }

void console_ring(SelfTest& test) {
  ConsoleRead all = read_console(console_text, sizeof(console_text));
  test.check("readconsole of the whole ring", all.rc, 0);
  test.note("bytes in the ring", all.count);
  test.check("... has bytes", all.count > 64, true);
  test.check("... the hypervisor's lines, prefixed (XEN)", contains(console_text, all.count, "(XEN) "), true);
  test.check("... not dom0's own console output (no console_to_ring)",
             contains(console_text, all.count, "pvguest: booting on"), false);
  const uint32_t start = all.index - all.count;  // the consumer: where an ordinary read begins

  ConsoleRead head = read_console(console_again, 64);
  test.check("readconsole of 64 bytes", head.rc == 0 && head.count == 64, true);
  test.check("... from the same start, the same bytes",
             head.index == start + 64 && same_bytes(console_again, console_text, 64), true);

  ConsoleRead rest = read_console(console_again, sizeof(console_again), true, head.index);
  test.check("incremental readconsole from there", rest.rc, 0);
  uint32_t overlap = rest.count < all.count - 64 ? rest.count : all.count - 64;
  test.check("... continues with the bytes after them",
             rest.count >= all.count - 64 && same_bytes(console_again, console_text + 64, overlap), true);
  ConsoleRead fresh = read_console(console_again, sizeof(console_again), true, rest.index);
  test.check("incremental readconsole at the end", fresh.rc, 0);
  test.check("... gives only what was printed since", fresh.count == fresh.index - rest.index && fresh.count < 4096,
             true);
  ConsoleRead outside = read_console(console_again, sizeof(console_again), true, start - 1);
  test.check("incremental readconsole from an index before the ring: from its start",
             outside.rc == 0 && outside.index - outside.count == start && same_bytes(console_again, console_text, 64),
             true);

  test.check(
      "readconsole into an unmapped buffer returns -EFAULT",
      [] {
        xen_sysctl_t op = sysctl_request(XEN_SYSCTL_readconsole);
        op.u.readconsole.count = 64;
        op.u.readconsole.buffer.p = reinterpret_cast<char*>(kUnmappedUser);
        return sysctl(op);
      }(),
      -XEN_EFAULT);
  ConsoleRead none = read_console(nullptr, 0);
  test.check("readconsole of 0 bytes into no buffer", none.rc == 0 && none.count == 0 && none.index == start, true);

  ConsoleRead cleared = read_console(console_again, 64, false, 0, true);
  test.check("readconsole of 64 bytes with clear", cleared.rc == 0 && cleared.count == 64, true);
  ConsoleRead after = read_console(console_again, sizeof(console_again));
  test.check(
      "... the next read starts where it stopped",
      after.rc == 0 && after.index - after.count == start + 64 && same_bytes(console_again, console_text + 64, 64),
      true);
  ConsoleRead emptied = read_console(console_again, sizeof(console_again), false, 0, true);
  test.check("readconsole of everything with clear", emptied.rc, 0);
  ConsoleRead empty = read_console(console_again, sizeof(console_again));
  test.check("... leaves only what was printed since", empty.rc == 0 && empty.index - empty.count == emptied.index,
             true);
}

// ---------------------------------------------------------------------------------------------
// dom0 beside domain 1

uint64_t domu_cpu_time() {
  xen_domctl_getvcpuinfo vcpu{};
  get_vcpu_info(kDomU, 0, vcpu);
  return vcpu.cpu_time;
}

bool domu_shut_down() {
  xen_domctl_getdomaininfo info;
  return get_info(kDomU, info) == 0 && flag(info, XEN_DOMINF_shutdown);
}

// Waits (blocking, so the domU gets the CPU) until the domU has run for a while.
bool wait_for_domu_to_run() {
  for (unsigned tries = 0; tries < 1000; ++tries) {
    if (domu_cpu_time() > 5'000'000) return true;
    sleep_ms(5);
  }
  return false;
}

void two_domains_info(SelfTest& test) {
  xen_domctl_getdomaininfo info;
  domid_t reported = 0;
  test.check("getdomaininfo of domain 1", get_info(kDomU, info, &reported), 0);
  test.check("... it is domain 1", reported == kDomU && info.domain == kDomU, true);
  test.check("... not running (dom0 is on the only CPU)", flag(info, XEN_DOMINF_running), false);
  test.check("... not paused or shut down", flag(info, XEN_DOMINF_paused | XEN_DOMINF_shutdown), false);
  test.check("... shutdown code never set", info.flags >> XEN_DOMINF_shutdownshift, kNeverShutDown);
  test.check("... one vCPU", info.nr_online_vcpus == 1 && info.max_vcpu_id == 0, true);
  test.note("domain 1 tot_pages", long(info.tot_pages));
  test.check("... holds what it may (domU_mem)", info.tot_pages > 0 && info.tot_pages == info.max_pages, true);
  test.check("... its own shared_info frame",
             info.shared_info_frame != 0 && info.shared_info_frame != (boot_info.start_info->shared_info >> 12), true);
  test.check("getdomaininfo of domain 2: -ESRCH (nothing above 1)", get_info(2, info), -XEN_ESRCH);
  test.check("getdomaininfo of DOMID_SELF: -EINVAL", get_info(DOMID_SELF, info), -XEN_EINVAL);

  xen_domctl_getdomaininfo list[4];
  uint32_t found = 0;
  test.check("getdomaininfolist from 0", info_list(0, 4, list, found), 0);
  test.check("... dom0 and domain 1, in order", found == 2 && list[0].domain == 0 && list[1].domain == kDomU, true);
  test.check("getdomaininfolist from 1", info_list(1, 4, list, found) == 0 && found == 1 && list[0].domain == kDomU,
             true);
  test.check("getdomaininfolist of at most 1", info_list(0, 1, list, found) == 0 && found == 1 && list[0].domain == 0,
             true);

  test.check("max_vcpus 1 (as created) on domain 1", max_vcpus(kDomU, 1), 0);
  test.check("max_vcpus 2 on domain 1 returns -EINVAL", max_vcpus(kDomU, 2), -XEN_EINVAL);
  test.check("max_vcpus 0 on domain 1 returns -EINVAL", max_vcpus(kDomU, 0), -XEN_EINVAL);
  xen_domctl_getvcpuinfo vcpu;
  test.check("getvcpuinfo of domain 1's vCPU 0", get_vcpu_info(kDomU, 0, vcpu), 0);
  test.check("... online, not running", vcpu.online == 1 && vcpu.running == 0, true);
  test.check("getvcpuinfo of its vCPU 1 returns -EINVAL", get_vcpu_info(kDomU, 1, vcpu), -XEN_EINVAL);

  uint8_t handle[16];
  for (unsigned i = 0; i < 16; ++i) handle[i] = uint8_t(i * 17);
  test.check("setdomainhandle of domain 1", set_handle(kDomU, handle), 0);
  info_list(kDomU, 1, list, found);
  test.check("... getdomaininfolist reports it", found == 1 && __builtin_memcmp(list[0].handle, handle, 16) == 0, true);
  const uint64_t pages = info.tot_pages;
  test.check("max_mem of domain 1: 32 MiB", max_mem(kDomU, 32 * 1024), 0);
  get_info(kDomU, info);
  test.check("... its max_pages is 8192", long(info.max_pages), 8192);
  max_mem(kDomU, pages * 4);
}

void pause_domu(SelfTest& test) {
  xen_domctl_getdomaininfo info;
  test.check("pausedomain of domain 1", pause(kDomU), 0);
  get_info(kDomU, info);
  test.check("... paused, not running", flag(info, XEN_DOMINF_paused) && !flag(info, XEN_DOMINF_running), true);
  uint64_t before = domu_cpu_time();
  sleep_ms(50);  // five time slices of the CPU idle or dom0's, none of domain 1's
  test.check("... not scheduled while paused (its cpu_time stands still)", long(domu_cpu_time()), long(before));

  test.check("pausedomain again (nested)", pause(kDomU), 0);
  test.check("unpausedomain once", unpause(kDomU), 0);
  get_info(kDomU, info);
  test.check("... still paused (one pause left)", flag(info, XEN_DOMINF_paused), true);
  sleep_ms(30);
  test.check("... still not scheduled", long(domu_cpu_time()), long(before));
  test.check("unpausedomain again", unpause(kDomU), 0);
  get_info(kDomU, info);
  test.check("... no longer paused", flag(info, XEN_DOMINF_paused), false);
  sleep_ms(50);
  test.check("... scheduled again (it ran, or finished)", domu_cpu_time() > before || domu_shut_down(), true);
  test.check("unpausedomain of a domain not paused returns -EINVAL", unpause(kDomU), -XEN_EINVAL);

  long failed = 0;
  for (unsigned i = 0; i < 255; ++i) failed += pause(kDomU) != 0;
  test.check("255 nested pauses", failed, 0);
  test.check("... the 256th returns -EOVERFLOW", pause(kDomU), -XEN_EOVERFLOW);
  for (unsigned i = 0; i < 255; ++i) failed += unpause(kDomU) != 0;
  test.check("255 unpauses", failed, 0);
  test.check("... then -EINVAL", unpause(kDomU), -XEN_EINVAL);
  get_info(kDomU, info);
  test.check("... and domain 1 is not paused", flag(info, XEN_DOMINF_paused), false);
}

void domu_shutdown(SelfTest& test) {
  bool stopped = false;
  for (unsigned tries = 0; tries < 6000 && !stopped; ++tries) {  // up to a minute of system time
    stopped = domu_shut_down();
    if (!stopped) sleep_ms(10);
  }
  test.check("domain 1 shuts down by itself", stopped, true);
  xen_domctl_getdomaininfo info;
  get_info(kDomU, info);
  test.check("... getdomaininfo: shut down, reason poweroff",
             flag(info, XEN_DOMINF_shutdown) && shutdown_code(info) == SHUTDOWN_poweroff, true);
  test.check("... not running or paused", flag(info, XEN_DOMINF_running | XEN_DOMINF_paused), false);
  test.note("domain 1 flags", info.flags);
  xen_domctl_getdomaininfo list[4];
  uint32_t found = 0;
  test.check("... and still listed", info_list(0, 4, list, found) == 0 && found == 2 && list[1].domain == kDomU, true);

  // The domU's console lines went to the hypervisor's ring too, and by now the oldest bytes
  // have made room for newer ones: the ring holds its last 16 KiB.
  ConsoleRead ring = read_console(console_text, sizeof(console_text));
  test.note("bytes in the ring", ring.count);
  test.check("readconsole: the domU's lines are in the ring",
             ring.rc == 0 && contains(console_text, ring.count, "(d1) forktest: passed"), true);
  test.check("... and the hypervisor's report of its shutdown",
             contains(console_text, ring.count, "(XEN) Domain 1 shut down: reason poweroff"), true);
  test.check(
      "... the ring wrapped: full, and its start is no longer the boot log",
      ring.count == sizeof(console_text) && !contains(console_text, ring.count, "(XEN) pvhv: a paravirtual hypervisor"),
      true);
}

// ---------------------------------------------------------------------------------------------
// A domU

void refused_domctls(SelfTest& test) {
  xen_domctl_t stale = domctl_request(XEN_DOMCTL_pausedomain, 0);
  stale.interface_version = XEN_DOMCTL_INTERFACE_VERSION - 1;
  test.check("domctl with a stale interface version: -EACCES before the privilege check", domctl(stale), -XEN_EACCES);
  test.check("domctl from a null pointer returns -EFAULT", domctl_at(0), -XEN_EFAULT);
  xen_domctl_getdomaininfo info;
  test.check("getdomaininfo of dom0 is refused", get_info(0, info), -XEN_EPERM);
  test.check("getdomaininfo of itself is refused", get_info(kDomU, info), -XEN_EPERM);
  test.check("getdomaininfo of a domain that does not exist is refused (it needs none)", get_info(kAbsent, info),
             -XEN_EPERM);
  test.check("pausedomain of dom0 is refused", pause(0), -XEN_EPERM);
  test.check("pausedomain of itself is refused (before the self check)", pause(kDomU), -XEN_EPERM);
  test.check("unpausedomain of dom0 is refused", unpause(0), -XEN_EPERM);
  test.check("max_mem of itself is refused", max_mem(kDomU, ~0ull), -XEN_EPERM);
  test.check("max_mem of dom0 is refused", max_mem(0, 1024), -XEN_EPERM);
  test.check("max_vcpus of itself is refused", max_vcpus(kDomU, 1), -XEN_EPERM);
  const uint8_t handle[16] = {1, 2, 3};
  test.check("setdomainhandle of dom0 is refused", set_handle(0, handle), -XEN_EPERM);
  xen_domctl_getvcpuinfo vcpu;
  test.check("getvcpuinfo of dom0 is refused", get_vcpu_info(0, 0, vcpu), -XEN_EPERM);
  test.check("an unknown sub-op on dom0 is refused", simple_domctl(kUnknownDomctl, 0), -XEN_EPERM);
  test.check("createdomain is refused", simple_domctl(XEN_DOMCTL_createdomain, 0), -XEN_EPERM);
  test.check("destroydomain of dom0 is refused", simple_domctl(XEN_DOMCTL_destroydomain, 0), -XEN_EPERM);
  test.check("pausedomain of a domain that does not exist: -ESRCH (looked up first)", pause(kAbsent), -XEN_ESRCH);
}

void refused_sysctls(SelfTest& test) {
  xen_domctl_getdomaininfo list[2];
  uint32_t found = 0;
  test.check("sysctl getdomaininfolist is refused", info_list(0, 2, list, found), -XEN_EPERM);
  xen_sysctl_physinfo info;
  test.check("sysctl physinfo is refused", physinfo(info), -XEN_EPERM);
  xen_sysctl_t op = sysctl_request(XEN_SYSCTL_sched_id);
  test.check("sysctl sched_id is refused", sysctl(op), -XEN_EPERM);
  test.check("sysctl readconsole is refused", read_console(console_text, 64).rc, -XEN_EPERM);
  test.check("sysctl tbuf_op is refused", trace_capture::tbuf_op(XEN_SYSCTL_TBUFOP_get_info, 0), -XEN_EPERM);
  xen_sysctl_t stale = sysctl_request(XEN_SYSCTL_physinfo);
  stale.interface_version = XEN_SYSCTL_INTERFACE_VERSION + 1;
  test.check("sysctl with a wrong interface version: -EACCES first", sysctl(stale), -XEN_EACCES);
}
}  // namespace

void selftest_domctl(SelfTest& test) {
  domctl_bad_requests(test);
  getdomaininfo_of_dom0(test);
  getdomaininfo_search(test);
  copy_back_fault(test);
  pause_self(test);
  memory_limits(test);
  vcpus(test);
  domain_handle(test);
  domain_list(test);
  scheduler_id(test);
  console_ring(test);  // before physinfo: the trace buffers print when they are set up
  machine_info(test);
}

void selftest_domctl_domu(SelfTest& test) {
  test.check("domain 1 runs", wait_for_domu_to_run(), true);
  two_domains_info(test);
  pause_domu(test);
  domu_shutdown(test);
}

void selftest_domctl_leave_paused(SelfTest& test) {
  test.check("pausedomain of domain 1, for good", pause(kDomU), 0);
  xen_domctl_getdomaininfo info;
  get_info(kDomU, info);
  test.check("... paused", flag(info, XEN_DOMINF_paused), true);
}

// selftest=domctl-pause-sync, in dom0 beside a domain 1 that keeps its vCPUs busy on other CPUs
// (the hypervisor's sched_smp=1): pausedomain returns only once none of its vCPUs is on a CPU
// (Xen's vcpu_sleep_sync), every time; between two pauses its vCPUs are seen running, on CPUs
// other than dom0's.
void selftest_domctl_pause_sync(SelfTest& test) {
  xen_domctl_getdomaininfo info;
  test.check("getdomaininfo of domain 1", get_info(kDomU, info), 0);
  const uint32_t vcpus = info.max_vcpu_id + 1;
  test.note("domain 1 vCPUs", long(vcpus));
  long seen_running = 0, seen_off_cpu0 = 0, failures = 0;
  for (unsigned round = 0; round < 40; ++round) {
    for (uint32_t id = 0; id < vcpus; ++id) {
      xen_domctl_getvcpuinfo vcpu;
      if (get_vcpu_info(kDomU, id, vcpu) != 0) continue;
      if (vcpu.running) ++seen_running;
      if (vcpu.running && vcpu.cpu != 0) ++seen_off_cpu0;
    }
    if (pause(kDomU) != 0) ++failures;
    get_info(kDomU, info);
    if (!flag(info, XEN_DOMINF_paused) || flag(info, XEN_DOMINF_running)) ++failures;
    for (uint32_t id = 0; id < vcpus; ++id) {
      xen_domctl_getvcpuinfo vcpu;
      if (get_vcpu_info(kDomU, id, vcpu) != 0 || vcpu.running) ++failures;
    }
    if (unpause(kDomU) != 0) ++failures;
    sleep_ms(2);
  }
  test.check("40 pauses: each returned with every vCPU of domain 1 off its CPU", failures, 0);
  test.note("vCPUs seen running between pauses", seen_running);
  test.check("its vCPUs ran meanwhile, on CPUs other than CPU 0", seen_off_cpu0 > 0, true);
}

void selftest_domctl_unprivileged(SelfTest& test) {
  refused_domctls(test);
  refused_sysctls(test);
  // More console output than the hypervisor's 16 KiB ring holds: dom0 then reads a ring that
  // has wrapped around (selftest=domctl-domu).
  for (unsigned line = 0; line < 200; ++line)
    print("console ring filler %03u: ................................................................\n", line);
}

}  // namespace kernel
