#pragma once
// Page-table entry bits and the store arithmetic the fuzzer's rules are written in (pure:
// used by the generator, the rule checks and the executor, which computes what a partial or
// read-modify-write store would leave in an entry before it lets the store happen).
#include <stdint.h>

#include "fuzz/generator/fuzz_model.h"

namespace lib::fuzz {

constexpr uint64_t kPresentBit = 1ull << 0, kWritableBit = 1ull << 1, kUserBit = 1ull << 2;
constexpr uint64_t kAccessedBit = 1ull << 5, kDirtyBit = 1ull << 6, kLargeBit = 1ull << 7;
constexpr uint64_t kGlobalBit = 1ull << 8, kNoExecuteBit = 1ull << 63;
constexpr uint64_t kAddressBits = 0x000ffffffffff000ull;  // 51:12
constexpr uint64_t kTableBits = kPresentBit | kWritableBit | kUserBit | kAccessedBit;
// What a read-modify-write store may set: never RW, never an address bit.
constexpr uint64_t kSettableFlags = 0xfff0000000000ffdull;
// What it may clear: flags only (clearing address bits would name another frame).
constexpr uint64_t kClearableFlags = 0xfff0000000000fffull;
constexpr uint64_t kSettableBitNumbers[] = {0, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 52, 55, 58, 62, 63};
constexpr uint64_t kClearableBitNumbers[] = {0, 1, 2, 5, 6, 7, 8, 9, 11, 52, 62, 63};

constexpr uint64_t kIfFlag = 1u << 9, kTfFlag = 1u << 8, kDfFlag = 1u << 10, kNtFlag = 1u << 14;
constexpr uint64_t kAcFlag = 1u << 18, kRfFlag = 1u << 16, kIdFlag = 1u << 21;

// Step::table for the kernel L4 (only its fuzz slots are written).
constexpr uint8_t kKernelL4Table = 0xff;
// A cmpxchg operand meaning "the entry's current value" (so the exchange succeeds).
constexpr uint64_t kUseCurrent = 0x5a5a5a5a5a5a5a5aull;

// Our frames outside the scratch set may be named only read-only, and those mapped read-only
// only (OtherFrame::read_only) not at all, present or not (a read-modify-write may set P).
bool entry_safe(const Pool& pool, uint64_t value);
uint64_t sanitize_entry(const Pool& pool, uint64_t value);

// The ports the hypervisor keeps for itself (it must drop every guest write to them).
bool hypervisor_owned_port(uint16_t port);

// What a store of `step` leaves in the entries it touches, given their current values:
// `count` entries from the step's slot (two for a misaligned store, `operand` for rep stos).
// Returns the number of entries written (0: the store changes nothing, e.g. a failed cmpxchg).
unsigned store_result(const Step& step, const uint64_t* current, uint64_t* result);
// How many consecutive entries the store touches.
unsigned store_span(const Step& step);

}  // namespace lib::fuzz
