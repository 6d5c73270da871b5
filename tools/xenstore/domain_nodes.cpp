// The standard nodes of a new domain, laid out and permitted as libxl does (libxl_create.c,
// libxl__domain_make, the console's frontend nodes, libxl__build_post's cpu/<i>/availability): dom0 owns the domain's
// home and lets the domain read it; the few nodes the domain writes (control/shutdown to acknowledge a request, data,
// device, ...) are the domain's own.
#include <errno.h>

#include <vector>

#include "tools/xenstore/xenstore.h"

namespace xenstore {

int create_domain_nodes(Store& store, const DomainSpec& spec) {
  if (spec.domid == 0 || spec.domid >= DOMID_FIRST_RESERVED) return EINVAL;
  const Perms read_only = {{0, Perm::none}, {spec.domid, Perm::read}};
  const Perms domain_own = {{spec.domid, Perm::none}};
  const std::string home = domain_path(spec.domid);
  const std::string vm = "/vm/" + spec.uuid;

  struct Entry {
    std::string path;
    std::string value;
    const Perms* perms;
    bool dir;
  };
  std::vector<Entry> entries = {
      {home, "", &read_only, true},
      {vm, "", &read_only, true},
      {vm + "/uuid", spec.uuid, &read_only, false},
      {vm + "/name", spec.name, &read_only, false},
      {home + "/vm", vm, &read_only, false},
      {home + "/name", spec.name, &read_only, false},
      {home + "/domid", std::to_string(spec.domid), &read_only, false},
      {home + "/control", "", &read_only, true},
      {home + "/control/shutdown", "", &domain_own, false},
      {home + "/control/feature-poweroff", "", &domain_own, false},
      {home + "/control/feature-reboot", "", &domain_own, false},
      {home + "/control/feature-suspend", "", &domain_own, false},
      {home + "/control/sysrq", "", &domain_own, false},
      {home + "/data", "", &domain_own, true},
      {home + "/device", "", &domain_own, true},
      {home + "/drivers", "", &domain_own, true},
      {home + "/error", "", &domain_own, true},
      {home + "/attr", "", &domain_own, true},
      {home + "/memory", "", &read_only, true},
      {home + "/memory/static-max", std::to_string(spec.memory_kb), &read_only, false},
      {home + "/memory/target", std::to_string(spec.memory_kb), &read_only, false},
      {home + "/console", "", &read_only, true},
      {home + "/console/port", std::to_string(spec.console_ring_port), &read_only, false},
      {home + "/console/ring-ref", std::to_string(spec.console_ring_mfn), &read_only, false},
      {home + "/console/limit", "1048576", &read_only, false},
      {home + "/console/type", "xenconsoled", &read_only, false},
      {home + "/console/output", "pty", &read_only, false},
      {home + "/cpu", "", &read_only, true},
  };
  for (uint32_t i = 0; i < spec.max_vcpus; ++i) {
    const std::string cpu = home + "/cpu/" + std::to_string(i);
    entries.push_back({cpu, "", &read_only, true});
    entries.push_back({cpu + "/availability", i < spec.vcpus ? "online" : "offline", &read_only, false});
  }
  for (const auto& e : entries) {
    int err = e.dir ? store.mkdir(e.path, e.perms) : store.write(e.path, e.value, e.perms);
    if (err) return err;
  }
  return 0;
}

}  // namespace xenstore
