#include "tools/daemon/ptwr_mode.h"

#include <cerrno>
#include <cstring>

namespace pvhv::daemon {
namespace {
constexpr unsigned kEmulate = 0, kWritable = 1, kAdaptive = 2;  // xenctrl_pvhv.h's PVHV_PTWR_*
}

std::optional<unsigned> ptwr_mode_from_name(const std::string& name) {
  if (name == "emulate") return kEmulate;
  if (name == "writable") return kWritable;
  if (name == "adaptive") return kAdaptive;
  return std::nullopt;
}

const char* ptwr_mode_name(unsigned mode) {
  return mode == kWritable ? "writable" : mode == kAdaptive ? "adaptive" : "emulate";
}

std::variant<std::optional<unsigned>, Failure> ptwr_mode_argument(const Json& body) {
  auto text = string_field(body, "mode");
  if (auto* failure = std::get_if<Failure>(&text)) return *failure;
  const auto& name = std::get<std::optional<std::string>>(text);
  if (!name) return std::optional<unsigned>();
  auto mode = ptwr_mode_from_name(*name);
  if (!mode) return Failure{kEinval, "ptwr mode must be emulate, writable or adaptive, not \"" + *name + "\""};
  return mode;
}

Failure ptwr_mode_failure(int error, uint32_t domid) {
  if (error == ENOSYS)
    return {kEopnotsupp,
            "ptwr-mode: this hypervisor has no per-domain page-table write mode (pvhv's; Xen 4.17 has none)"};
  return {error, "ptwr-mode of domain " + std::to_string(domid) + ": " + std::strerror(error)};
}

bool ptwr_mode_absent_is_fine(const std::string& mode_name, const Failure& failure) {
  return failure.error == kEopnotsupp && mode_name == "emulate";
}

}  // namespace pvhv::daemon
