// The RFLAGS bits, once for the whole hypervisor (the entry paths, bounce frames, iret, the
// instruction emulator). Pure constants: host tests include it too.
#pragma once
#include <stdint.h>

namespace rflags {
inline constexpr uint64_t carry = uint64_t{1} << 0;
inline constexpr uint64_t reserved_one = uint64_t{1} << 1;  // always reads as 1
inline constexpr uint64_t parity = uint64_t{1} << 2;
inline constexpr uint64_t adjust = uint64_t{1} << 4;
inline constexpr uint64_t zero = uint64_t{1} << 6;
inline constexpr uint64_t sign = uint64_t{1} << 7;
inline constexpr uint64_t trap = uint64_t{1} << 8;
inline constexpr uint64_t interrupt = uint64_t{1} << 9;
inline constexpr uint64_t direction = uint64_t{1} << 10;
inline constexpr uint64_t overflow = uint64_t{1} << 11;
inline constexpr uint64_t iopl = uint64_t{3} << 12;
inline constexpr uint64_t nested_task = uint64_t{1} << 14;
inline constexpr uint64_t resume = uint64_t{1} << 16;
inline constexpr uint64_t virtual_8086 = uint64_t{1} << 17;
inline constexpr uint64_t alignment_check = uint64_t{1} << 18;
inline constexpr uint64_t id = uint64_t{1} << 21;
// Every architecturally defined bit (VIF/VIP included): what a guest may hand to iret.
inline constexpr uint64_t defined = 0x3f7fd5;
}  // namespace rflags
