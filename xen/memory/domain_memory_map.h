// A domain's own e820 (XENMEM_set_memory_map, read back by the domain with XENMEM_memory_map),
// as Xen keeps d->arch.e820. Xen takes up to E820MAX (1024) entries from its heap; this table
// holds up to `capacity` in the domain itself, and a longer map is -ENOMEM (Xen's answer when
// its allocation fails), one of up to E820MAX entries -EINVAL as Xen.
#pragma once
#include <stdint.h>

namespace memory {
struct __attribute__((packed)) MemoryMapEntry {  // struct e820entry of the public ABI
  uint64_t address;
  uint64_t size;
  uint32_t type;
};

struct DomainMemoryMap {
  static constexpr unsigned capacity = 128;
  static constexpr unsigned xen_limit = 1024;  // Xen's E820MAX
  unsigned count = 0;                          // 0: none set (XENMEM_memory_map is -ENOSYS)
  MemoryMapEntry entries[capacity]{};
};
}  // namespace memory
