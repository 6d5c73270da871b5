// The machine's memory as the hypervisor sees it: every frame through the direct map.
#pragma once
#include <stdint.h>
#include "arch/x86/layout.h"
#include "mm/machine_memory.h"

namespace machine {
const mm::MachineMemory& frames();
uint64_t nr_frames();
void set_nr_frames(uint64_t count);
template <typename T = void>
T* to_virtual(uint64_t maddr) {
  return reinterpret_cast<T*>(DIRECTMAP_VIRT_START + maddr);
}
}  // namespace machine

// The firmware memory map in e820 form, as XENMEM_machine_memory_map hands it to dom0.
struct __attribute__((packed)) E820Entry {
  uint64_t address;
  uint64_t size;
  uint32_t type;
};

namespace machine {
constexpr unsigned max_e820_entries = 64;
void add_e820(const E820Entry& entry);
unsigned e820_count();
const E820Entry* e820();
}  // namespace machine
