// Hypercalls that describe the hypervisor: xen_version, vm_assist (memory_op: memory_op.cpp).
#include "abi/xen_abi.h"
#include <xen/errno.h>
#include <xen/features.h>
#include <xen/version.h>
#include <xen/xen.h>
#include "domain/domain.h"
#include "hypercall/dispatch.h"
#include "domain/guest_memory.h"
#include "hypercall/feature_submap.h"

extern const char* hypervisor_command_line;

namespace hypercall {
namespace {
constexpr long version_major = 4, version_minor = 17;
constexpr unsigned long supported_vm_assists =
    (1UL << VMASST_TYPE_4gb_segments) | (1UL << VMASST_TYPE_4gb_segments_notify) |
    (1UL << VMASST_TYPE_writable_pagetables) | (1UL << VMASST_TYPE_pae_extended_cr3) |
    (1UL << VMASST_TYPE_architectural_iopl) | (1UL << VMASST_TYPE_m2p_strict);

template <size_t N>
long copy_string(Vcpu& vcpu, uint64_t to, const char* text) {
  char buffer[N] = {};
  for (size_t i = 0; i + 1 < N && text[i]; ++i) buffer[i] = text[i];
  return guest_memory::copy_to(vcpu, to, buffer, N) ? 0 : -XEN_EFAULT;
}

long get_features(Vcpu& vcpu, uint64_t argument) {
  xen_feature_info_t info;
  if (!guest_memory::read(vcpu, argument, info)) return -XEN_EFAULT;
  const bool pae_extended_cr3 = vcpu.domain->vm_assist & (1ul << VMASST_TYPE_pae_extended_cr3);
  const features::Submap submap = features::pv_submap(info.submap_idx, vcpu.domain->privileged, pae_extended_cr3);
  if (!submap.valid) return -XEN_EINVAL;
  info.submap = submap.bits;
  return guest_memory::write(vcpu, argument, info) ? 0 : -XEN_EFAULT;
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
  if (command == VMASST_CMD_enable)
    vcpu.domain->vm_assist |= 1UL << type;
  else if (command == VMASST_CMD_disable)
    vcpu.domain->vm_assist &= ~(1UL << type);
  else
    return -XEN_ENOSYS;
  return 0;
}

}  // namespace hypercall
