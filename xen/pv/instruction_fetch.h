// Reads the instruction bytes at a guest RIP from the guest's current address space, as the
// guest's own fetch would (domain/guest_memory: direct access with fault fixups).
#pragma once
#include <stddef.h>
#include <stdint.h>
#include "emulate/pte_write.h"

struct Vcpu;

namespace instruction_fetch {

struct FetchedInstruction {
  uint8_t bytes[pte_write::kMaxInstructionBytes]{};
  size_t count = 0;  // bytes readable from rip on, at most 15
};

// False if not even the first byte is readable. When the instruction may run into a next
// page that is not mapped, `count` stops at the page end: the decoder then says whether
// the instruction actually needed more (a real fetch would fault there too).
bool fetch(const Vcpu& vcpu, uint64_t rip, FetchedInstruction& out);

}  // namespace instruction_fetch
