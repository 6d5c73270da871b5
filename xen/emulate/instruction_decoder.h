// Zydis, built freestanding into the hypervisor, decodes guest instructions. Today only the
// boot self-check uses it; the page-table write emulation path builds on this wrapper.
#pragma once
#include <stddef.h>
#include <stdint.h>

namespace instruction_decoder {
struct Decoded {
  bool ok = false;
  unsigned length = 0;
  const char* mnemonic = "";
  unsigned operand_count = 0;
};
Decoded decode_64(const uint8_t* bytes, size_t length);
bool self_check();  // decodes a known PTE-write instruction and reports what Zydis saw
}  // namespace instruction_decoder
