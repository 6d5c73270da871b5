#include "pv/rules/forced_emulation.h"

namespace forced_emulation {
namespace {
constexpr uint8_t prefix[kPrefixLength] = {0x0f, 0x0b, 'x', 'e', 'n'};
constexpr uint8_t cpuid[kInstructionLength - kPrefixLength] = {0x0f, 0xa2};

bool same(const uint8_t* bytes, const uint8_t* expected, unsigned length) {
  for (unsigned i = 0; i < length; ++i)
    if (bytes[i] != expected[i]) return false;
  return true;
}
}  // namespace

Decision decide(const uint8_t* bytes, size_t readable) {
  // Each copy either completes or faults, before anything is compared (as Xen's two copies).
  if (readable < kPrefixLength) return {Verdict::fault, unsigned(readable)};
  if (!same(bytes, prefix, kPrefixLength)) return {};
  if (readable < kInstructionLength) return {Verdict::fault, unsigned(readable)};
  if (!same(bytes + kPrefixLength, cpuid, kInstructionLength - kPrefixLength)) return {};
  return {Verdict::cpuid, 0};
}

}  // namespace forced_emulation
