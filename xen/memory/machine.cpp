#include "memory/machine.h"

namespace machine {
namespace {
mm::MachineMemory all_frames{reinterpret_cast<uint8_t*>(DIRECTMAP_VIRT_START), 0};
}
const mm::MachineMemory& frames() { return all_frames; }
uint64_t nr_frames() { return all_frames.nr_frames; }
void set_nr_frames(uint64_t count) { all_frames.nr_frames = count; }
}  // namespace machine

namespace machine {
namespace {
E820Entry e820_entries[max_e820_entries];
unsigned e820_entry_count;
}  // namespace
void add_e820(const E820Entry& entry) {
  if (e820_entry_count < max_e820_entries) e820_entries[e820_entry_count++] = entry;
}
unsigned e820_count() { return e820_entry_count; }
const E820Entry* e820() { return e820_entries; }
}  // namespace machine
