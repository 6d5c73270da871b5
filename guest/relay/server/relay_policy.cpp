// The allow-list of the dom0 relay. Everything not named here is refused, so a hypercall added
// to Xen later is refused until someone decides what it can do to dom0.
#define __XEN_TOOLS__ 1  // sysctl.h and domctl.h are the tools' interface
#include "relay/server/relay_policy.h"

#include <xen/xen.h>
#include <xen/domctl.h>
#include <xen/event_channel.h>
#include <xen/memory.h>
#include <xen/sched.h>
#include <xen/sysctl.h>
#include <xen/version.h>

#include "common/xen/pvhv_domctl.h"
#include "common/xen/version_argument.h"

namespace lib::relay {
namespace {

constexpr bool fits_32(uint64_t value) { return value >> 32 == 0; }

// A pointer argument the hypervisor will access `bytes` bytes at: 0 (the hypervisor faults and
// returns -EFAULT; nothing of dom0 is at 0 while the relay runs) or inside one buffer.
bool pointer_ok(const BufferTable& buffers, uint64_t pointer, uint64_t bytes) {
  return pointer == 0 || buffers.covers(pointer, bytes);
}

Refusal pointer(const BufferTable& buffers, uint64_t p, uint64_t bytes) {
  return pointer_ok(buffers, p, bytes) ? Refusal::none : Refusal::pointer;
}

// The bytes XENVER_* writes at its argument; -1 for a command that is not known.
int64_t version_bytes(uint64_t command, uint64_t argument, const BufferTable& buffers) {
  const int64_t bytes = pvhv::xen_abi::version_argument_bytes(command);
  if (bytes != pvhv::xen_abi::kVersionBuildId) return bytes;
  // The caller says how much room follows the header.
  xen_build_id_t header{};
  if (argument && buffers.read(argument, &header, sizeof(header.len)) != BufferTable::Status::ok) return 0;
  return int64_t(sizeof(header)) + header.len;
}

Refusal xen_version(const uint64_t (&a)[5], const BufferTable& buffers) {
  if (!fits_32(a[0])) return Refusal::sub_op;
  int64_t bytes = version_bytes(a[0], a[1], buffers);
  if (bytes < 0) return Refusal::sub_op;
  return bytes == 0 ? Refusal::none : pointer(buffers, a[1], uint64_t(bytes));
}

Refusal console_io(const uint64_t (&a)[5], const BufferTable& buffers) {
  if (a[0] != CONSOLEIO_write && a[0] != CONSOLEIO_read) return Refusal::sub_op;
  if (!fits_32(a[1])) return Refusal::sub_op;  // Xen's count is an unsigned int
  return pointer(buffers, a[2], a[1]);
}

// A structure at `p` whose domid field must not name dom0: read from the buffer (the relay
// runs one request at a time, so the host cannot change it before the hypercall reads it).
template <typename Struct, typename Field>
Refusal foreign_domain_struct(const BufferTable& buffers, uint64_t p, Field Struct::*domid) {
  if (!pointer_ok(buffers, p, sizeof(Struct))) return Refusal::pointer;
  if (p == 0) return Refusal::none;
  Struct s{};
  buffers.read(p, &s, sizeof(s));
  return names_dom0(s.*domid) ? Refusal::own_domain : Refusal::none;
}

Refusal memory_op(const uint64_t (&a)[5], const BufferTable& buffers) {
  // Bits above the command are Xen's own continuation state.
  if (a[0] >= 64) return Refusal::sub_op;
  switch (a[0]) {
    // Memory of another domain only: dom0's own frames are the kernel's to give back.
    case XENMEM_increase_reservation:
    case XENMEM_decrease_reservation:
    case XENMEM_populate_physmap:
    case XENMEM_claim_pages: return foreign_domain_struct(buffers, a[1], &xen_memory_reservation::domid);
    case XENMEM_set_memory_map: return foreign_domain_struct(buffers, a[1], &xen_foreign_memory_map::domid);
    case XENMEM_maximum_ram_page: return Refusal::none;  // no argument
    case XENMEM_current_reservation:
    case XENMEM_maximum_reservation:
    case XENMEM_maximum_gpfn: return pointer(buffers, a[1], sizeof(domid_t));  // reads only
    case XENMEM_memory_map:
    case XENMEM_machine_memory_map: return pointer(buffers, a[1], sizeof(xen_memory_map));
    default: return Refusal::sub_op;
  }
}

Refusal event_channel_op(const uint64_t (&a)[5], const BufferTable& buffers) {
  // Ports of dom0 come and go through the relay's own event requests, so the host cannot
  // close or rebind the ones the kernel uses (its timer, the trace buffers' VIRQ).
  switch (a[0]) {
    case EVTCHNOP_alloc_unbound: return foreign_domain_struct(buffers, a[1], &evtchn_alloc_unbound::dom);
    case EVTCHNOP_status: return pointer(buffers, a[1], sizeof(evtchn_status));
    default: return Refusal::sub_op;
  }
}

Refusal sched_op(const uint64_t (&a)[5], const BufferTable& buffers) {
  // dom0's own shutdown is the relay's SHUTDOWN request (it ends the trace stream first).
  if (a[0] != SCHEDOP_remote_shutdown) return Refusal::sub_op;
  return foreign_domain_struct(buffers, a[1], &sched_remote_shutdown::domain_id);
}

// The owner of the frames an mmu_update or mmuext_op names (foreigndom's lower half): another
// ordinary domain. dom0 (0, DOMID_SELF) would put dom0's frames in a domU's tables (writable,
// or typed as its tables); DOMID_XEN and DOMID_IO the hypervisor's frames or the machine's I/O
// memory, which no toolstack's builder maps into a domain.
Refusal frame_owner(uint32_t domid) {
  if (names_dom0(domid)) return Refusal::own_domain;
  return domid >= DOMID_FIRST_RESERVED ? Refusal::special_domain : Refusal::none;
}

// mmu_update(requests, count, done, foreigndom): foreigndom's upper half is the page-table
// owner + 1 (Xen's encoding; 0 means dom0's own page tables), its lower half the owner of the
// frames the entries map.
Refusal mmu_update(const uint64_t (&a)[5], const BufferTable& buffers) {
  if (!fits_32(a[1]) || (a[1] & 0x80000000u) || !fits_32(a[3])) return Refusal::sub_op;
  uint32_t page_table_owner_plus_one = uint32_t(a[3]) >> 16;
  if (page_table_owner_plus_one == 0 || names_dom0(page_table_owner_plus_one - 1)) return Refusal::own_page_tables;
  if (Refusal r = frame_owner(uint32_t(a[3]) & 0xffff); r != Refusal::none) return r;
  if (!pointer_ok(buffers, a[0], a[1] * sizeof(mmu_update_t))) return Refusal::pointer;
  return pointer(buffers, a[2], sizeof(unsigned int));
}

// mmuext_op(ops, count, done, foreigndom): pinning and unpinning another domain's tables.
Refusal mmuext_op(const uint64_t (&a)[5], const BufferTable& buffers) {
  if (!fits_32(a[1]) || (a[1] & 0x80000000u) || !fits_32(a[3])) return Refusal::sub_op;
  if (names_dom0(uint32_t(a[3]) & 0xffff) || (a[3] >> 16)) return Refusal::own_page_tables;
  if (Refusal r = frame_owner(uint32_t(a[3]) & 0xffff); r != Refusal::none) return r;
  if (!pointer_ok(buffers, a[0], a[1] * sizeof(mmuext_op_t))) return Refusal::pointer;
  if (!pointer_ok(buffers, a[2], sizeof(unsigned int))) return Refusal::pointer;
  for (uint64_t i = 0; a[0] && i < a[1]; ++i) {
    mmuext_op_t op{};
    buffers.read(a[0] + i * sizeof(op), &op, sizeof(op));
    if (op.cmd > MMUEXT_UNPIN_TABLE) return Refusal::sub_op;  // PIN_L1..L4 and UNPIN only
  }
  return Refusal::none;
}

// What a domctl may do to dom0 (its `domain` 0): read what the toolstack lists (xl list,
// vcpu-list), pin its vCPUs (xl vcpu-pin 0, as Xen's toolstack may) and pvhv's page-table write mode (xl ptwr-mode 0: a
// hypervisor policy dom0's kernel runs under in every mode, as under the ptwr= boot option). Everything else would act
// on dom0's memory, vCPUs, scheduling or life (max_mem, hypercall_init, setvcpucontext, pause,
// destroy...). createdomain's `domain` 0 asks for a new domain's id, not dom0. For a domctl,
// DOMID_SELF names no domain (Xen looks it up by id alone: -ESRCH).
bool domctl_allowed_on_dom0(const xen_domctl_t& domctl) {
  switch (domctl.cmd) {
    case XEN_DOMCTL_createdomain:
    case XEN_DOMCTL_getdomaininfo:
    case XEN_DOMCTL_getvcpuinfo:
    case XEN_DOMCTL_getvcpuaffinity:
    case XEN_DOMCTL_setvcpuaffinity:  // xl vcpu-pin 0: where dom0's vCPUs run, nothing of its memory or life
    case XEN_DOMCTL_get_address_size: return true;
    case pvhv::xen_abi::kDomctlPtwrMode: {
      pvhv::xen_abi::DomctlPtwrMode body{};
      static_assert(sizeof(body) <= sizeof(domctl.u.pad));
      __builtin_memcpy(&body, domctl.u.pad, sizeof(body));
      return body.op == pvhv::xen_abi::kPtwrModeGet || body.op == pvhv::xen_abi::kPtwrModeSet;
    }
    default: return false;
  }
}

Refusal domctl(const uint64_t (&a)[5], const BufferTable& buffers) {
  if (!pointer_ok(buffers, a[0], sizeof(xen_domctl_t))) return Refusal::pointer;
  if (a[0] == 0) return Refusal::none;
  // Read once from the buffer: the relay runs one request at a time, so the host cannot change
  // it before the hypervisor reads it.
  xen_domctl_t domctl{};
  buffers.read(a[0], &domctl, sizeof(domctl));
  return domctl.domain != 0 || domctl_allowed_on_dom0(domctl) ? Refusal::none : Refusal::own_domain;
}

}  // namespace

Refusal check_hypercall(uint32_t number, const uint64_t (&args)[5], const BufferTable& buffers) {
  switch (number) {
    case __HYPERVISOR_xen_version: return xen_version(args, buffers);
    case __HYPERVISOR_console_io: return console_io(args, buffers);
    case __HYPERVISOR_sysctl: return pointer(buffers, args[0], sizeof(xen_sysctl_t));
    case __HYPERVISOR_domctl: return domctl(args, buffers);
    case __HYPERVISOR_memory_op: return memory_op(args, buffers);
    case __HYPERVISOR_event_channel_op: return event_channel_op(args, buffers);
    case __HYPERVISOR_sched_op: return sched_op(args, buffers);
    case __HYPERVISOR_mmu_update: return mmu_update(args, buffers);
    case __HYPERVISOR_mmuext_op: return mmuext_op(args, buffers);
    default: return Refusal::hypercall;
  }
}

Refusal check_foreign_access(uint32_t domid, bool write) {
  if (domid > 0xffff) return Refusal::special_domain;
  if (domid == DOMID_XEN) return Refusal::none;
  if (domid >= DOMID_FIRST_RESERVED && domid != DOMID_SELF) return Refusal::special_domain;
  if (write && names_dom0(domid)) return Refusal::own_domain;
  return Refusal::none;
}

Refusal check_foreign_map(uint32_t domid) { return domid > 0xffff ? Refusal::special_domain : frame_owner(domid); }

}  // namespace lib::relay
