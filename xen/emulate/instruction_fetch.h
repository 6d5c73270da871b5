// Reads the instruction bytes at a guest RIP through the guest's current page tables (the
// same software walk guest_memory uses), and reports the machine frame of the first byte,
// which keys the decode cache.
#pragma once
#include <stddef.h>
#include <stdint.h>
#include "emulate/pte_write.h"

struct Vcpu;

namespace instruction_fetch {

struct FetchedInstruction {
  uint8_t bytes[pte_write::kMaxInstructionBytes]{};
  size_t count = 0;       // bytes readable from rip on, at most 15
  uint64_t code_mfn = 0;  // frame holding bytes[0]
};

// False if not even the first byte is readable. When the instruction may run into a next
// page that is not mapped, `count` stops at the page end: the decoder then says whether
// the instruction actually needed more (a real fetch would fault there too).
bool fetch(const Vcpu& vcpu, uint64_t rip, FetchedInstruction& out);

}  // namespace instruction_fetch
