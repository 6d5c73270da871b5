// Hypercalls that describe the hypervisor and the domain's memory: xen_version, vm_assist,
// memory_op (memory maps and reservation queries).
#include "mm/xen_abi.h"
#include <xen/errno.h>
#include <xen/features.h>
#include <xen/memory.h>
#include <xen/version.h>
#include <xen/xen.h>
#include "domain/domain.h"
#include "hypercall/dispatch.h"
#include "memory/machine.h"
#include "pv/guest_memory.h"

extern const char* hypervisor_command_line;

namespace hypercall {
namespace {
constexpr long version_major = 4, version_minor = 17;
constexpr unsigned long supported_vm_assists =
    (1UL << VMASST_TYPE_4gb_segments) | (1UL << VMASST_TYPE_4gb_segments_notify) |
    (1UL << VMASST_TYPE_writable_pagetables) | (1UL << VMASST_TYPE_pae_extended_cr3) |
    (1UL << VMASST_TYPE_m2p_strict);

template <size_t N>
long copy_string(Vcpu& vcpu, uint64_t to, const char* text) {
  char buffer[N] = {};
  for (size_t i = 0; i + 1 < N && text[i]; ++i) buffer[i] = text[i];
  return guest_memory::copy_to(vcpu, to, buffer, N) ? 0 : -XEN_EFAULT;
}

long get_features(Vcpu& vcpu, uint64_t argument) {
  xen_feature_info_t info;
  if (!guest_memory::read(vcpu, argument, info)) return -XEN_EFAULT;
  info.submap = 0;
  if (info.submap_idx == 0 && vcpu.domain->privileged) info.submap |= 1u << XENFEAT_dom0;
  return guest_memory::write(vcpu, argument, info) ? 0 : -XEN_EFAULT;
}

long read_domid(Vcpu& vcpu, uint64_t argument, Domain*& domain) {
  domid_t id;
  if (!guest_memory::read(vcpu, argument, id)) return -XEN_EFAULT;
  if (id != DOMID_SELF && id != vcpu.domain->id) return -XEN_ESRCH;
  domain = vcpu.domain;
  return 0;
}

// Copies at most the guest's nr_entries and reports how many it got, as Xen does.
long write_memory_map(Vcpu& vcpu, uint64_t argument, const E820Entry* entries, unsigned count) {
  xen_memory_map_t map;
  if (!guest_memory::read(vcpu, argument, map)) return -XEN_EFAULT;
  unsigned n = map.nr_entries < count ? map.nr_entries : count;
  if (!guest_memory::copy_to(vcpu, uint64_t(map.buffer.p), entries, n * sizeof(E820Entry))) return -XEN_EFAULT;
  map.nr_entries = n;
  return guest_memory::write(vcpu, argument, map) ? 0 : -XEN_EFAULT;
}
}  // namespace

long xen_version(Vcpu& vcpu, TrapFrame&, Arguments& args) {
  uint64_t to = args.a[1];
  switch (args.a[0]) {
    case XENVER_version: return (version_major << 16) | version_minor;
    case XENVER_extraversion: return copy_string<sizeof(xen_extraversion_t)>(vcpu, to, "-pvhv");
    case XENVER_capabilities: return copy_string<sizeof(xen_capabilities_info_t)>(vcpu, to, "xen-3.0-x86_64");
    case XENVER_changeset: return copy_string<sizeof(xen_changeset_info_t)>(vcpu, to, "pvhv");
    case XENVER_compile_info: {
      xen_compile_info_t info{};
      __builtin_memcpy(info.compiler, "g++", 4);
      __builtin_memcpy(info.compile_by, "pvhv", 5);
      return guest_memory::write(vcpu, to, info) ? 0 : -XEN_EFAULT;
    }
    case XENVER_platform_parameters: {
      xen_platform_parameters_t parameters{HYPERVISOR_VIRT_START};
      return guest_memory::write(vcpu, to, parameters) ? 0 : -XEN_EFAULT;
    }
    case XENVER_get_features: return get_features(vcpu, to);
    case XENVER_pagesize: return 4096;
    case XENVER_guest_handle: {
      xen_domain_handle_t handle{};
      return guest_memory::write(vcpu, to, handle) ? 0 : -XEN_EFAULT;
    }
    case XENVER_commandline:
      if (!vcpu.domain->privileged) return -XEN_EPERM;
      return copy_string<sizeof(xen_commandline_t)>(vcpu, to, hypervisor_command_line);
    default: return -XEN_ENOSYS;
  }
}

long vm_assist(Vcpu& vcpu, TrapFrame&, Arguments& args) {
  uint64_t command = args.a[0], type = args.a[1];
  if (type >= 64 || !(supported_vm_assists & (1UL << type))) return -XEN_EINVAL;
  if (command == VMASST_CMD_enable) vcpu.domain->vm_assist |= 1UL << type;
  else if (command == VMASST_CMD_disable) vcpu.domain->vm_assist &= ~(1UL << type);
  else return -XEN_ENOSYS;
  return 0;
}

long memory_op(Vcpu& vcpu, TrapFrame&, Arguments& args) {
  Domain* domain = nullptr;
  long error;
  constexpr uint64_t command_bits = 0x3f;  // Xen keeps a continuation index above bit 6
  switch (args.a[0] & command_bits) {
    case XENMEM_maximum_ram_page: return long(machine::nr_frames() - 1);
    case XENMEM_current_reservation:
      if ((error = read_domid(vcpu, args.a[1], domain))) return error;
      return long(domain->tot_pages);
    case XENMEM_maximum_reservation:
      if ((error = read_domid(vcpu, args.a[1], domain))) return error;
      return long(domain->max_pages);
    case XENMEM_maximum_gpfn:
      if ((error = read_domid(vcpu, args.a[1], domain))) return error;
      return long(domain->tot_pages - 1);
    case XENMEM_memory_map: {
      // No map was set for the domain: it sees one RAM range covering its pages.
      E820Entry ram{0, vcpu.domain->tot_pages << 12, 1};
      return write_memory_map(vcpu, args.a[1], &ram, 1);
    }
    case XENMEM_machine_memory_map:
      if (!vcpu.domain->privileged) return -XEN_EPERM;
      return write_memory_map(vcpu, args.a[1], machine::e820(), machine::e820_count());
    default: return -XEN_ENOSYS;
  }
}

}  // namespace hypercall
