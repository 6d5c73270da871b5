// selftest=cpuinfo, in dom0 (run on ours and on Xen 4.17, at -smp 1 and -smp 4): the physical
// CPUs as the toolstack reads them and the vCPU affinities it sets, with Xen 4.17's answers
// (xen/common/sysctl.c, xen/common/sched/core.c's vcpu_affinity_domctl, common/bitmap.c):
//  - physinfo's CPU fields (noted: the integration test compares them with the machine's);
//  - XEN_SYSCTL_cputopoinfo: a null handle answers the count (CPUs 0 .. highest online), a
//    long buffer is filled up to the count and num_cpus says how many, a short one is filled as
//    far as it goes and keeps its num_cpus, every online CPU on node 0 of socket 0 with its own
//    core (QEMU's default split), a bad buffer -EFAULT;
//  - XEN_SYSCTL_getcpuinfo: at most nr_cpu_ids entries, the idle CPUs' idle time growing, a null
//    or bad buffer -EFAULT (none with max_cpus 0);
//  - XEN_DOMCTL_getvcpuaffinity / setvcpuaffinity on dom0's vCPUs: every CPU by default (soft
//    too), bitmaps zero-filled past nr_cpu_ids; a vCPU id beyond max_vcpus -EINVAL, flags 0 or
//    a null handle for a flag given -EINVAL, flags of neither kind a no-op; a hard mask with no
//    online CPU (empty, only CPUs that do not exist, nr_bits 0) -EINVAL and nothing changed;
//    bits past nr_bits and past nr_cpu_ids ignored; the answers: hard & online, soft & online &
//    hard; an empty soft mask accepted; a bad hard bitmap -EFAULT, a bad soft one -EFAULT with
//    the hard mask put back (with both flags the soft bitmap's result is the answer: an
//    unwritable hard one alone goes unreported, as Xen's); on a vCPU not made yet -ESRCH, on a
//    domain destroyed -ESRCH; a new domain's vCPUs on every CPU listed.
#define __XEN_TOOLS__ 1
#include <stdint.h>
#include <xen/xen.h>
#include <xen/domctl.h>
#include <xen/sysctl.h>

#include "arch/control.h"
#include "arch/xen.h"
#include "kernel/console/console.h"
#include "kernel/events/time.h"
#include "kernel/events/timer.h"
#include "selftest/control/control_selftests.h"

namespace kernel {
namespace {
using namespace control;
constexpr uint64_t kUnmapped = 0x0000000010000000ull;  // nothing is mapped there before init
constexpr uint32_t kFill = 0xaaaaaaaa;
constexpr domid_t kDom0 = 0;

xen_sysctl_cputopo_t topology[16];
xen_sysctl_cpuinfo_t idle[16];
uint8_t hard_map[16], soft_map[16];

template <typename T>
uint64_t address(T* p) {
  return uint64_t(reinterpret_cast<uintptr_t>(p));
}

long cputopoinfo(uint32_t& num_cpus, uint64_t buffer) {
  xen_sysctl_t op = sysctl_request(XEN_SYSCTL_cputopoinfo);
  op.u.cputopoinfo.num_cpus = num_cpus;
  op.u.cputopoinfo.cputopo.p = reinterpret_cast<xen_sysctl_cputopo_t*>(buffer);
  long rc = sysctl(op);
  num_cpus = op.u.cputopoinfo.num_cpus;
  return rc;
}

long getcpuinfo(uint32_t max_cpus, uint64_t buffer, uint32_t& nr_cpus) {
  xen_sysctl_t op = sysctl_request(XEN_SYSCTL_getcpuinfo);
  op.u.getcpuinfo.max_cpus = max_cpus;
  op.u.getcpuinfo.info.p = reinterpret_cast<xen_sysctl_cpuinfo_t*>(buffer);
  op.u.getcpuinfo.nr_cpus = kFill;
  long rc = sysctl(op);
  nr_cpus = op.u.getcpuinfo.nr_cpus;
  return rc;
}

void fill_maps() {
  for (unsigned i = 0; i < sizeof(hard_map); ++i) hard_map[i] = soft_map[i] = 0xaa;
}

// An affinity domctl on dom0 (or `domain`): the bitmaps at `hard` / `soft` of nr_bits each.
long affinity(uint32_t cmd, uint32_t vcpu, uint32_t flags, uint64_t hard, uint32_t hard_bits, uint64_t soft,
              uint32_t soft_bits, domid_t domain = kDom0) {
  xen_domctl_t op = domctl_request(cmd, domain);
  op.u.vcpuaffinity.vcpu = vcpu;
  op.u.vcpuaffinity.flags = flags;
  op.u.vcpuaffinity.cpumap_hard.bitmap.p = reinterpret_cast<uint8_t*>(hard);
  op.u.vcpuaffinity.cpumap_hard.nr_bits = hard_bits;
  op.u.vcpuaffinity.cpumap_soft.bitmap.p = reinterpret_cast<uint8_t*>(soft);
  op.u.vcpuaffinity.cpumap_soft.nr_bits = soft_bits;
  return domctl(op);
}

constexpr uint32_t kBoth = XEN_VCPUAFFINITY_HARD | XEN_VCPUAFFINITY_SOFT;

// vCPU `vcpu`'s masks as getvcpuaffinity gives them into one-byte bitmaps.
long get_masks(uint32_t vcpu, uint8_t& hard, uint8_t& soft) {
  fill_maps();
  long rc = affinity(XEN_DOMCTL_getvcpuaffinity, vcpu, kBoth, address(hard_map), 8, address(soft_map), 8);
  hard = hard_map[0];
  soft = soft_map[0];
  return rc;
}

// Sets one-byte masks (flags as given) and returns the answer's bytes in hard_map[0] / soft_map[0].
long set_masks(uint32_t vcpu, uint32_t flags, uint8_t hard, uint8_t soft, uint32_t bits = 8) {
  fill_maps();
  hard_map[0] = hard;
  soft_map[0] = soft;
  return affinity(XEN_DOMCTL_setvcpuaffinity, vcpu, flags, address(hard_map), bits, address(soft_map), bits);
}

// The machine as physinfo tells it: CPUs 0 .. nr_cpus-1 online (maxcpus= brings up the lowest),
// nr_cpu_ids the CPUs the firmware listed; dom0's vCPU 0's default masks as read first.
struct Machine {
  uint32_t nr_cpus = 1, nr_cpu_ids = 1, present = 1;
  uint8_t online = 1;    // the online CPUs as a byte (at most 8 CPUs)
  uint8_t possible = 1;  // CPUs 0 .. nr_cpu_ids-1
  uint8_t hard = 1, soft = 1;
};

Machine physical_cpus(SelfTest& test) {
  xen_sysctl_t op = sysctl_request(XEN_SYSCTL_physinfo);
  test.check("physinfo", sysctl(op), 0);
  const xen_sysctl_physinfo& info = op.u.physinfo;
  test.note("physinfo nr_cpus", info.nr_cpus);
  test.note("physinfo max_cpu_id", info.max_cpu_id);
  test.note("physinfo threads_per_core", info.threads_per_core);
  test.note("physinfo cores_per_socket", info.cores_per_socket);
  test.note("physinfo nr_nodes", info.nr_nodes);
  test.check("... no more CPUs online than listed", info.nr_cpus <= info.max_cpu_id + 1, true);
  test.check("... threads x cores = the online CPUs of a one-socket machine",
             info.threads_per_core * info.cores_per_socket, info.nr_cpus);
  test.check("... one node", info.nr_nodes, 1);
  Machine m;
  m.nr_cpus = info.nr_cpus;
  m.nr_cpu_ids = info.max_cpu_id + 1;
  m.online = uint8_t(m.nr_cpus >= 8 ? 0xff : (1u << m.nr_cpus) - 1);
  m.possible = uint8_t(m.nr_cpu_ids >= 8 ? 0xff : (1u << m.nr_cpu_ids) - 1);
  return m;
}

void cpu_topology(SelfTest& test, Machine& m) {
  uint32_t num = 0;
  test.check("cputopoinfo: a null handle", cputopoinfo(num, 0), 0);
  test.note("cputopoinfo count", num);
  test.check("... at least the online CPUs, at most those listed", num >= m.nr_cpus && num <= m.nr_cpu_ids, true);
  m.present = num;
  num = 99;
  test.check("cputopoinfo: a null handle with num_cpus 99", cputopoinfo(num, 0), 0);
  test.check("... answers the count", num, m.present);
  for (auto& t : topology) t = {kFill, kFill, kFill};
  num = 16;
  test.check("cputopoinfo: 16 entries", cputopoinfo(num, address(topology)), 0);
  test.check("... num_cpus: the entries written", num, m.present);
  for (uint32_t cpu = m.nr_cpus; cpu < m.present; ++cpu) {  // listed, not online (maxcpus=)
    test.note("cputopoinfo offline CPU core", topology[cpu].core);
    test.note("cputopoinfo offline CPU socket", topology[cpu].socket);
    test.note("cputopoinfo offline CPU node", topology[cpu].node);
  }
  bool placed = true, distinct = true;
  for (uint32_t cpu = 0; cpu < m.nr_cpus; ++cpu) {
    placed = placed && topology[cpu].node == 0 && topology[cpu].socket == 0;
    for (uint32_t other = 0; other < cpu; ++other) distinct = distinct && topology[other].core != topology[cpu].core;
  }
  test.check("... every CPU on node 0, socket 0", placed, true);
  test.check("... each CPU its own core", distinct, true);
  test.note("cputopoinfo core of the last CPU", topology[m.nr_cpus - 1].core);
  test.check("... nothing written past the count", topology[m.present].core == kFill, true);
  if (m.nr_cpus > 1) {
    for (auto& t : topology) t = {kFill, kFill, kFill};
    num = 1;
    test.check("cputopoinfo: a one-entry buffer", cputopoinfo(num, address(topology)), 0);
    test.check("... num_cpus kept at 1", num, 1);
    test.check("... entry 0 written", topology[0].node, 0);
    test.check("... entry 1 not", topology[1].core == kFill, true);
  }
  num = 0;
  test.check("cputopoinfo: num_cpus 0 with a buffer", cputopoinfo(num, address(topology)), 0);
  test.check("... num_cpus stays 0", num, 0);
  num = 16;
  test.check("cputopoinfo: an unmapped buffer", cputopoinfo(num, kUnmapped), -XEN_EFAULT);
}

void cpu_idle_times(SelfTest& test, const Machine& m) {
  uint32_t nr = 0;
  for (auto& i : idle) i.idletime = kFill;
  test.check("getcpuinfo: 16 entries", getcpuinfo(16, address(idle), nr), 0);
  test.check("... nr_cpus: nr_cpu_ids", nr, m.nr_cpu_ids);
  test.check("... nothing written past them", idle[m.nr_cpu_ids].idletime == kFill, true);
  uint64_t first[16];
  for (unsigned i = 0; i < 16; ++i) first[i] = idle[i].idletime;
  sleep_until(system_time_ns() + 20'000'000);
  test.check("getcpuinfo again, 20 ms later", getcpuinfo(m.nr_cpu_ids, address(idle), nr), 0);
  bool growing = true, grew = true, offline_zero = true;
  for (uint32_t cpu = 0; cpu < m.nr_cpu_ids; ++cpu) {
    growing = growing && idle[cpu].idletime >= first[cpu];
    if (cpu > 0 && cpu < m.nr_cpus) grew = grew && idle[cpu].idletime > first[cpu];  // the other CPUs are idle
    if (cpu >= m.nr_cpus) offline_zero = offline_zero && idle[cpu].idletime == 0;
  }
  test.check("... no CPU's idle time went back", growing, true);
  test.check("... the idle CPUs' idle time grew", grew, true);
  test.check("... a CPU not online: 0", offline_zero, true);
  test.check("getcpuinfo: one entry", getcpuinfo(1, address(idle), nr), 0);
  test.check("... nr_cpus 1", nr, 1);
  test.check("getcpuinfo: max_cpus 0, no buffer", getcpuinfo(0, 0, nr), 0);
  test.check("... nr_cpus 0", nr, 0);
  test.check("getcpuinfo: a null buffer", getcpuinfo(m.nr_cpu_ids, 0, nr), -XEN_EFAULT);
  test.check("getcpuinfo: an unmapped buffer", getcpuinfo(m.nr_cpu_ids, kUnmapped, nr), -XEN_EFAULT);
}

void affinity_defaults(SelfTest& test, Machine& m, uint32_t dom0_vcpus) {
  uint8_t hard = 0, soft = 0;
  test.check("getvcpuaffinity of vCPU 0", get_masks(0, m.hard, m.soft), 0);
  test.note("dom0's default hard mask", m.hard);
  test.note("dom0's default soft mask", m.soft);
  test.check("... hard: every online CPU", (m.hard & m.online) == m.online, true);
  test.check("... soft: every online CPU", (m.soft & m.online) == m.online, true);
  for (uint32_t vcpu = 1; vcpu < dom0_vcpus; ++vcpu) {
    test.check("getvcpuaffinity", get_masks(vcpu, hard, soft), 0);
    test.check("... hard as vCPU 0's", hard, m.hard);
    test.check("... soft as vCPU 0's", soft, m.soft);
  }
  fill_maps();
  test.check("getvcpuaffinity into 128-bit bitmaps",
             affinity(XEN_DOMCTL_getvcpuaffinity, 0, kBoth, address(hard_map), 128, address(soft_map), 128), 0);
  bool zeros = true;
  for (unsigned i = (m.nr_cpu_ids + 7) / 8; i < 16; ++i) zeros = zeros && hard_map[i] == 0 && soft_map[i] == 0;
  test.check("... zero bytes past nr_cpu_ids", zeros, true);
  fill_maps();
  test.check("getvcpuaffinity hard only",
             affinity(XEN_DOMCTL_getvcpuaffinity, 0, XEN_VCPUAFFINITY_HARD, address(hard_map), 8, 0, 8), 0);
  test.check("... the soft bitmap untouched", soft_map[0], 0xaa);
}

void affinity_refusals(SelfTest& test, const Machine& m, uint32_t dom0_vcpus) {
  const uint64_t h = address(hard_map), s = address(soft_map);
  const uint32_t commands[] = {XEN_DOMCTL_setvcpuaffinity, XEN_DOMCTL_getvcpuaffinity};
  for (uint32_t cmd : commands) {
    const bool set = cmd == XEN_DOMCTL_setvcpuaffinity;
    test.check(set ? "setvcpuaffinity: vCPU max_vcpus" : "getvcpuaffinity: vCPU max_vcpus",
               affinity(cmd, dom0_vcpus, kBoth, h, 8, s, 8), -XEN_EINVAL);
    test.check(set ? "setvcpuaffinity: vCPU 4096" : "getvcpuaffinity: vCPU 4096",
               affinity(cmd, 4096, kBoth, h, 8, s, 8), -XEN_EINVAL);
    test.check(set ? "setvcpuaffinity: flags 0" : "getvcpuaffinity: flags 0", affinity(cmd, 0, 0, h, 8, s, 8),
               -XEN_EINVAL);
    test.check(set ? "setvcpuaffinity: hard with a null bitmap" : "getvcpuaffinity: hard with a null bitmap",
               affinity(cmd, 0, XEN_VCPUAFFINITY_HARD, 0, 8, s, 8), -XEN_EINVAL);
    test.check(set ? "setvcpuaffinity: soft with a null bitmap" : "getvcpuaffinity: soft with a null bitmap",
               affinity(cmd, 0, XEN_VCPUAFFINITY_SOFT, h, 8, 0, 8), -XEN_EINVAL);
    test.check(set ? "setvcpuaffinity: DOMID_SELF" : "getvcpuaffinity: DOMID_SELF",
               affinity(cmd, 0, kBoth, h, 8, s, 8, DOMID_SELF), -XEN_ESRCH);
  }
  uint8_t hard = 0, soft = 0;
  test.check("setvcpuaffinity: flags FORCE only (neither hard nor soft)", set_masks(0, XEN_VCPUAFFINITY_FORCE, 0, 0),
             0);
  test.check("... changes nothing", get_masks(0, hard, soft) == 0 && hard == m.hard && soft == m.soft, true);
  test.check("setvcpuaffinity: unknown flag bits beside hard", set_masks(0, XEN_VCPUAFFINITY_HARD | 0x80, m.hard, 0),
             0);
  test.check("setvcpuaffinity: an empty hard mask", set_masks(0, XEN_VCPUAFFINITY_HARD, 0, 0), -XEN_EINVAL);
  if (m.nr_cpu_ids < 8)
    test.check("setvcpuaffinity: a hard mask of CPUs that do not exist",
               set_masks(0, XEN_VCPUAFFINITY_HARD, uint8_t(~m.possible), 0), -XEN_EINVAL);
  if (m.possible != m.online)
    test.check("setvcpuaffinity: a hard mask of CPUs that are not online",
               set_masks(0, XEN_VCPUAFFINITY_HARD, uint8_t(m.possible & ~m.online), 0), -XEN_EINVAL);
  test.check("setvcpuaffinity: a hard mask of nr_bits 0", set_masks(0, XEN_VCPUAFFINITY_HARD, 0xff, 0, 0), -XEN_EINVAL);
  test.check("setvcpuaffinity: both, the hard mask empty", set_masks(0, kBoth, 0, 1), -XEN_EINVAL);
  test.check("... nothing changed", get_masks(0, hard, soft) == 0 && hard == m.hard && soft == m.soft, true);
  test.check("setvcpuaffinity: an unmapped hard bitmap",
             affinity(XEN_DOMCTL_setvcpuaffinity, 0, XEN_VCPUAFFINITY_HARD, kUnmapped, 8, address(soft_map), 8),
             -XEN_EFAULT);
  test.check("getvcpuaffinity: an unmapped hard bitmap",
             affinity(XEN_DOMCTL_getvcpuaffinity, 0, XEN_VCPUAFFINITY_HARD, kUnmapped, 8, 0, 8), -XEN_EFAULT);
  // Xen's quirk: with both flags the soft bitmap's result is the answer, the hard one's lost.
  test.check("getvcpuaffinity: both, the hard bitmap unmapped",
             affinity(XEN_DOMCTL_getvcpuaffinity, 0, kBoth, kUnmapped, 8, address(soft_map), 8), 0);
  test.check("getvcpuaffinity: both, the soft bitmap unmapped",
             affinity(XEN_DOMCTL_getvcpuaffinity, 0, kBoth, address(hard_map), 8, kUnmapped, 8), -XEN_EFAULT);
  hard_map[0] = 1;
  test.check("setvcpuaffinity: hard CPU 0, an unmapped soft bitmap",
             affinity(XEN_DOMCTL_setvcpuaffinity, 0, kBoth, address(hard_map), 8, kUnmapped, 8), -XEN_EFAULT);
  test.check("... the hard mask put back", get_masks(0, hard, soft) == 0 && hard == m.hard && soft == m.soft, true);
}

void affinity_changes(SelfTest& test, const Machine& m) {
  // A domU's defaults are checked in affinity_unmade.
  uint8_t hard = 0, soft = 0;
  const uint8_t last = uint8_t(1u << (m.nr_cpus - 1));
  test.check("setvcpuaffinity: hard, nr_bits 1 of 0xff", set_masks(0, XEN_VCPUAFFINITY_HARD, 0xff, 0, 1), 0);
  test.check("... answered: CPU 0 (one byte written)", hard_map[0], 1);
  test.check("... the next byte untouched", hard_map[1], 0xaa);
  test.check("... kept: CPU 0", get_masks(0, hard, soft) == 0 && hard == 1, true);
  test.check("setvcpuaffinity: hard the last CPU and CPUs that do not exist",
             set_masks(0, XEN_VCPUAFFINITY_HARD, uint8_t(last | (m.nr_cpu_ids < 8 ? ~m.possible : 0)), 0), 0);
  test.check("... answered: the last CPU", hard_map[0], last);
  test.check("... kept without the others", get_masks(0, hard, soft) == 0 && hard == last, true);
  test.check("setvcpuaffinity: an empty soft mask", set_masks(0, XEN_VCPUAFFINITY_SOFT, 0, 0), 0);
  test.check("... answered: none", soft_map[0], 0);
  test.check("... kept empty", get_masks(0, hard, soft) == 0 && soft == 0, true);
  if (m.nr_cpus >= 3) {
    test.check("setvcpuaffinity: hard 0-1, soft 1-2", set_masks(0, kBoth, 0x3, 0x6), 0);
    test.check("... answered hard 0-1", hard_map[0], 0x3);
    test.check("... answered soft: soft & hard = 1", soft_map[0], 0x2);
    test.check("... kept as given", get_masks(0, hard, soft) == 0 && hard == 0x3 && soft == 0x6, true);
    test.check("setvcpuaffinity: soft 2 alone, outside hard", set_masks(0, XEN_VCPUAFFINITY_SOFT, 0, 0x4), 0);
    test.check("... answered: none of it is usable", soft_map[0], 0);
  }
  test.check("setvcpuaffinity: every CPU again", set_masks(0, kBoth, 0xff, 0xff), 0);
  test.check("... answered: the online CPUs", hard_map[0] == m.online && soft_map[0] == m.online, true);
  test.check("... kept: every CPU listed", get_masks(0, hard, soft) == 0 && hard == m.possible && soft == m.possible,
             true);
  test.check("setvcpuaffinity: the defaults again", set_masks(0, kBoth, m.hard, m.soft), 0);
  test.check("... kept", get_masks(0, hard, soft) == 0 && hard == m.hard && soft == m.soft, true);
  xen_domctl_t info = domctl_request(XEN_DOMCTL_getvcpuinfo, kDom0);
  test.check("getvcpuinfo of vCPU 0", domctl(info), 0);
  test.check("... its CPU is one of the machine's", info.u.getvcpuinfo.cpu < m.nr_cpus, true);
}

// A domain made by createdomain alone: its vCPU slots exist (max_vcpus 2) but no vCPU yet.
void affinity_unmade(SelfTest& test, const Machine& m) {
  xen_domctl_createdomain config = pv_domain_config();
  config.max_vcpus = 2;
  xen_domctl_t create = domctl_request(XEN_DOMCTL_createdomain, 0);
  create.u.createdomain = config;
  if (domctl(create) != 0) {
    test.check("createdomain for the unmade vCPUs", 1, 0);
    return;
  }
  const domid_t domain = create.domain;
  const uint64_t h = address(hard_map), s = address(soft_map);
  test.check("getvcpuaffinity: a vCPU not made yet", affinity(XEN_DOMCTL_getvcpuaffinity, 1, kBoth, h, 8, s, 8, domain),
             -XEN_ESRCH);
  test.check("setvcpuaffinity: a vCPU not made yet", affinity(XEN_DOMCTL_setvcpuaffinity, 0, kBoth, h, 8, s, 8, domain),
             -XEN_ESRCH);
  test.check("setvcpuaffinity: vCPU 2 of 2", affinity(XEN_DOMCTL_setvcpuaffinity, 2, kBoth, h, 8, s, 8, domain),
             -XEN_EINVAL);
  test.check("max_vcpus 2", max_vcpus(domain, 2), 0);
  fill_maps();
  test.check("getvcpuaffinity of the new domain's vCPU 1",
             affinity(XEN_DOMCTL_getvcpuaffinity, 1, kBoth, h, 8, s, 8, domain), 0);
  test.check("... hard: every CPU listed", hard_map[0], m.possible);
  test.check("... soft: every CPU listed", soft_map[0], m.possible);
  fill_maps();
  hard_map[0] = 1;
  test.check("setvcpuaffinity: vCPU 1, made now",
             affinity(XEN_DOMCTL_setvcpuaffinity, 1, XEN_VCPUAFFINITY_HARD, h, 8, s, 8, domain), 0);
  test.check("destroydomain", simple_domctl(XEN_DOMCTL_destroydomain, domain), 0);
  // Neither checks for a dying domain; once destroyed (nothing held it), the domain is gone.
  test.check("getvcpuaffinity of the destroyed domain",
             affinity(XEN_DOMCTL_getvcpuaffinity, 0, kBoth, h, 8, s, 8, domain), -XEN_ESRCH);
}
}  // namespace

void selftest_cpuinfo(SelfTest& test) {
  Machine m = physical_cpus(test);
  if (m.nr_cpus == 0 || m.nr_cpu_ids > 8) {
    test.check("at most 8 CPUs for these checks", m.nr_cpu_ids, 8);
    return;
  }
  xen_domctl_getdomaininfo dom0{};
  test.check("getdomaininfo of dom0", get_info(kDom0, dom0), 0);
  const uint32_t dom0_vcpus = dom0.max_vcpu_id + 1;
  test.note("dom0 vCPUs", dom0_vcpus);
  cpu_topology(test, m);
  cpu_idle_times(test, m);
  affinity_defaults(test, m, dom0_vcpus);
  affinity_refusals(test, m, dom0_vcpus);
  affinity_changes(test, m);
  affinity_unmade(test, m);
}

}  // namespace kernel
