#include "boot/boot_domains.h"

namespace boot {

BootDomains plan_boot_domains(size_t module_count, size_t max_domains) {
  BootDomains plan;
  if (max_domains > BootDomains::capacity) max_domains = BootDomains::capacity;
  // dom0 and each domU take a kernel and, if one follows, an initrd.
  for (size_t module = 0; module < module_count; module += 2) {
    if (plan.count == max_domains) {
      plan.ignored_modules = module_count - module;
      break;
    }
    BootDomain& domain = plan.domains[plan.count];
    domain.id = uint16_t(plan.count);
    domain.privileged = plan.count == 0;
    domain.kernel_module = module;
    domain.has_initrd = module + 1 < module_count;
    domain.initrd_module = module + 1;
    ++plan.count;
  }
  return plan;
}

}  // namespace boot
