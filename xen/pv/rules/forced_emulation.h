// Pure: Xen's forced-emulation prefix, `ud2; .ascii "xen"` before a `cpuid` (0f 0b 78 65 6e
// 0f a2), which a PV kernel executes to get the hypervisor's CPUID instead of the hardware's
// (Xen 4.17's pv/emul-inv-op.c). Decided on the bytes readable at the #UD's RIP, as Xen
// copies them: first the five of the prefix, then the two of the instruction, a short copy
// of either being a page fault at the first byte that could not be read.
#pragma once
#include <stddef.h>
#include <stdint.h>

namespace forced_emulation {

inline constexpr unsigned kPrefixLength = 5;       // ud2, 'x', 'e', 'n'
inline constexpr unsigned kInstructionLength = 7;  // the prefix and cpuid

enum class Verdict {
  not_forced,  // not the prefix, or the prefix before something other than cpuid: the #UD stays
  fault,       // the bytes ran into an unreadable page: #PF at rip + fault_offset
  cpuid,       // emulate CPUID; the instruction is kInstructionLength bytes
};

struct Decision {
  Verdict verdict = Verdict::not_forced;
  unsigned fault_offset = 0;
};

// `readable`: how many bytes from the RIP on could be read (at most what `bytes` holds).
Decision decide(const uint8_t* bytes, size_t readable);

}  // namespace forced_emulation
