#pragma once
// Which multiboot modules make which domain, until a toolstack creates domains at run time.
// Xen 4.17 on x86 builds only dom0 at boot; our convention for domUs extends its module list:
//
//   module 0         dom0's kernel (its command line: dom0's arguments)
//   module 1         dom0's initrd
//   modules 2, 3     domain 1's kernel (command line: its arguments) and initrd
//   modules 4, 5     domain 2's ...
//
// A last kernel module without a partner boots without initrd. Domains beyond the domain
// table are not built; their modules are counted as ignored.

#include <stddef.h>
#include <stdint.h>

namespace boot {

struct BootDomain {
  uint16_t id = 0;
  bool privileged = false;
  size_t kernel_module = 0;
  bool has_initrd = false;
  size_t initrd_module = 0;
};

struct BootDomains {
  static constexpr size_t capacity = 32;  // the domain table's slots (domain/domain.h)
  BootDomain domains[capacity];
  size_t count = 0;
  size_t ignored_modules = 0;
};

// `max_domains` (at most `capacity`) bounds how many domains, dom0 included, are planned.
BootDomains plan_boot_domains(size_t module_count, size_t max_domains);

}  // namespace boot
