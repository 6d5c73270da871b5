// How many bytes XENVER_* writes at its argument (xen/version.h), for whoever bounces that
// argument: the library (xc_version) and the dom0 relay (which checks the argument lies in one
// of its buffers). One table, so the two never disagree. Header-only and freestanding.
#pragma once
#include <stdint.h>
#include <xen/xen.h>
#include <xen/version.h>

namespace pvhv::xen_abi {

// The fixed size, or kUnknownVersionCommand for a command Xen 4.17 does not have, or
// kVersionBuildId for XENVER_build_id (a header whose `len` says how much room follows).
inline constexpr int64_t kUnknownVersionCommand = -1;
inline constexpr int64_t kVersionBuildId = -2;

constexpr int64_t version_argument_bytes(uint64_t command) {
  switch (command) {
    case XENVER_version:
    case XENVER_pagesize: return 0;
    case XENVER_extraversion: return sizeof(xen_extraversion_t);
    case XENVER_compile_info: return sizeof(xen_compile_info_t);
    case XENVER_capabilities: return sizeof(xen_capabilities_info_t);
    case XENVER_changeset: return sizeof(xen_changeset_info_t);
    case XENVER_platform_parameters: return sizeof(xen_platform_parameters_t);
    case XENVER_get_features: return sizeof(xen_feature_info_t);
    case XENVER_guest_handle: return sizeof(xen_domain_handle_t);
    case XENVER_commandline: return sizeof(xen_commandline_t);
    case XENVER_build_id: return kVersionBuildId;
    default: return kUnknownVersionCommand;
  }
}

}  // namespace pvhv::xen_abi
