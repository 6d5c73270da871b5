// What a guest instruction that wrote to a read-only page-table page would have done to the
// page-table entry it hit. Pure: the hypervisor glue (pte_emulation) supplies the bytes at
// the guest RIP, the registers, the faulting address (CR2) and the entry's current value,
// validates and commits the entry this computes, and only then applies the register effects.
//
// Two steps, so the first can be cached (decode_cache.h):
//   decode  — instruction bytes -> DecodedWrite (Zydis; depends on the bytes only),
//   execute — DecodedWrite + registers + CR2 + old entry -> WriteResult (no side effects).
// apply() then writes a WriteResult's register, flag and RIP effects to the guest frame.
#pragma once
#include <stddef.h>
#include <stdint.h>
#include "arch/x86/cpu/trap_frame.h"
#include "emulate/register_operand.h"

namespace pte_write {

inline constexpr size_t kMaxInstructionBytes = 15;  // architectural limit
inline constexpr unsigned kEntryBytes = 8;

enum class Status : uint8_t {
  ok,
  truncated,                 // the bytes available end inside the instruction
  undecodable,               // not a valid x86-64 instruction (e.g. a stray 0x06)
  unsupported,               // valid, but not a page-table write we emulate
  not_the_faulting_address,  // the computed address is not in the entry CR2 points at
  straddles,                 // the access crosses an 8-byte entry boundary
  misaligned,                // inside one entry, but not naturally aligned
};
const char* to_string(Status status);

enum class Operation : uint8_t { mov, xchg, cmpxchg, and_, or_, xor_, bts, btr };

// Only FS and GS have bases in 64-bit mode; every other segment is flat.
enum class Segment : uint8_t { flat, fs, gs };

// base + index * scale + displacement (+ segment base), or RIP-relative.
struct MemoryOperand {
  Segment segment = Segment::flat;
  bool rip_relative = false;
  bool has_base = false;
  bool has_index = false;
  emulate::RegisterOperand base{};
  emulate::RegisterOperand index{};
  uint8_t scale = 1;
  uint8_t address_bytes = 8;  // 4 with an address-size (0x67) prefix
  int64_t displacement = 0;
};

enum class SourceKind : uint8_t { none, register_, immediate };
struct SourceOperand {
  SourceKind kind = SourceKind::none;
  emulate::RegisterOperand reg{};
  uint64_t immediate = 0;  // sign-extended as the instruction defines, truncated at use
};

// The decoded form of one supported instruction: independent of register values and of
// where the instruction sits, so one decode serves every later execution of the same bytes.
struct DecodedWrite {
  Operation operation = Operation::mov;
  uint8_t width = 8;    // bytes of memory accessed: 1, 2, 4 or 8
  uint8_t length = 0;   // instruction length in bytes
  bool locked = false;  // informational: the commit is atomic either way
  MemoryOperand destination{};
  SourceOperand source{};
};

struct DecodeResult {
  Status status = Status::unsupported;
  DecodedWrite write{};
};

// Decodes `available` bytes (at most kMaxInstructionBytes are looked at) as one 64-bit mode
// instruction and checks that it is a form this emulator supports: mov, xchg, cmpxchg, and,
// or, xor, bts, btr with a single memory destination and a general-register or immediate
// source (see README.md for the list and what is refused).
DecodeResult decode(const uint8_t* bytes, size_t available);

// The guest state an execution reads besides the general registers.
struct SegmentBases {
  uint64_t fs = 0;
  uint64_t gs = 0;  // the base active in the guest's current mode
};

struct RegisterWrite {
  bool present = false;
  emulate::Gpr gpr = emulate::Gpr::rax;
  uint64_t value = 0;  // the whole 64-bit register after the instruction
};

struct WriteResult {
  Status status = Status::unsupported;
  bool writes = false;     // false for a cmpxchg that found another value: entry unchanged
  uint64_t new_entry = 0;  // the whole entry after the write (other bytes kept)
  uint8_t length = 0;      // RIP advance
  RegisterWrite register_write{};
  uint64_t rflags = 0;  // the guest's RFLAGS after the instruction
};

// Executes `write` against the entry that contains `fault_address` (whose current value is
// `old_entry`), reading registers from `registers`. Nothing is modified. Refuses (status
// not ok) if the access is not inside that one entry or not naturally aligned.
// Inline (below): the emulated write's hot path, where a call and a result passed through
// memory cost a third of what the instruction's work did.
inline WriteResult execute(const DecodedWrite& write, const TrapFrame& registers, const SegmentBases& segments,
                           uint64_t fault_address, uint64_t old_entry);

// decode() then execute(), for callers without a decode cache.
WriteResult emulate(const uint8_t* bytes, size_t available, const TrapFrame& registers, const SegmentBases& segments,
                    uint64_t fault_address, uint64_t old_entry);

// Applies an ok result's effects on the guest: the register write, RFLAGS and RIP. Call
// only once the new entry is committed (or the instruction wrote nothing). A result that is
// not ok changes nothing. Inline: a call cost the emulated write more than the stores.
inline void apply(const WriteResult& result, TrapFrame& registers) {
  if (result.status != Status::ok) return;
  if (result.register_write.present) emulate::gpr(registers, result.register_write.gpr) = result.register_write.value;
  registers.rflags = result.rflags;
  registers.rip += result.length;
}

// The linear address `write` accesses with these registers (for bts/btr with a register bit
// offset, the 1/2/4/8-byte unit that holds the bit).
inline uint64_t access_address(const DecodedWrite& write, const TrapFrame& registers, const SegmentBases& segments);

// ---- inline definitions ----

namespace detail {
inline uint64_t segment_base(Segment segment, const SegmentBases& bases) {
  switch (segment) {
    case Segment::fs: return bases.fs;
    case Segment::gs: return bases.gs;
    case Segment::flat: return 0;
  }
  return 0;
}

// BT* with a register bit offset address a bit string: the offset is signed and may select
// a unit before or after the operand (SDM: "Effective Address + (width * (BitOffset DIV
// bits))"). An immediate offset is taken modulo the operand width and never moves it.
inline bool has_register_bit_offset(const DecodedWrite& write) {
  return (write.operation == Operation::bts || write.operation == Operation::btr) &&
         write.source.kind == SourceKind::register_;
}

inline int64_t bit_string_displacement(const DecodedWrite& write, const TrapFrame& registers) {
  const int64_t offset = emulate::sign_extend(emulate::read(registers, write.source.reg), write.width);
  const unsigned bits_log2 = __builtin_ctz(8u * write.width);
  return (offset >> bits_log2) * write.width;  // arithmetic shift: floor division
}

inline uint64_t source_value(const DecodedWrite& write, const TrapFrame& registers) {
  const uint64_t value =
      write.source.kind == SourceKind::register_ ? emulate::read(registers, write.source.reg) : write.source.immediate;
  return value & emulate::width_mask(write.width);
}

// Where the access lies relative to the entry CR2 points at.
inline Status check_access(uint64_t address, unsigned width, uint64_t fault_address) {
  const uint64_t offset = address & (kEntryBytes - 1);
  if (offset + width > kEntryBytes) return Status::straddles;
  if ((address & ~uint64_t{kEntryBytes - 1}) != (fault_address & ~uint64_t{kEntryBytes - 1}))
    return Status::not_the_faulting_address;
  if ((offset & (width - 1)) != 0) return Status::misaligned;  // widths are powers of two
  return Status::ok;
}

// The memory operand's new value, whether it is written, and the other effects.
struct Effect {
  bool writes = true;
  uint64_t value = 0;
  RegisterWrite register_write{};
  uint64_t rflags = 0;
};
// Out of line (pte_write.cpp): every operation; execute does a mov itself.
Effect perform(const DecodedWrite& write, const TrapFrame& registers, uint64_t old_value);
}  // namespace detail

[[gnu::always_inline]] inline uint64_t access_address(const DecodedWrite& write, const TrapFrame& registers,
                                                      const SegmentBases& segments) {
  const MemoryOperand& memory = write.destination;
  uint64_t offset = static_cast<uint64_t>(memory.displacement);
  if (memory.rip_relative) offset += registers.rip + write.length;
  if (memory.has_base) offset += emulate::read(registers, memory.base);
  if (memory.has_index) offset += emulate::read(registers, memory.index) * memory.scale;
  if (detail::has_register_bit_offset(write))
    offset += static_cast<uint64_t>(detail::bit_string_displacement(write, registers));
  // With a 0x67 prefix the effective address wraps at 4 GiB before the segment base is added.
  offset &= emulate::width_mask(memory.address_bytes);
  return detail::segment_base(memory.segment, segments) + offset;
}

[[gnu::always_inline]] inline WriteResult execute(const DecodedWrite& write, const TrapFrame& registers,
                                                  const SegmentBases& segments, uint64_t fault_address,
                                                  uint64_t old_entry) {
  const uint64_t address = access_address(write, registers, segments);
  WriteResult result;
  result.status = detail::check_access(address, write.width, fault_address);
  if (result.status != Status::ok) return result;

  const unsigned shift = 8 * static_cast<unsigned>(address & (kEntryBytes - 1));
  const uint64_t mask = emulate::width_mask(write.width) << shift;
  const uint64_t old_value = (old_entry & mask) >> shift;
  const detail::Effect effect =
      write.operation == Operation::mov
          ? detail::Effect{.value = detail::source_value(write, registers), .rflags = registers.rflags}
          : detail::perform(write, registers, old_value);

  result.writes = effect.writes;
  // A narrower write replaces its bytes and keeps the rest of the entry as it is now.
  result.new_entry = effect.writes ? (old_entry & ~mask) | ((effect.value << shift) & mask) : old_entry;
  result.length = write.length;
  result.register_write = effect.register_write;
  result.rflags = effect.rflags;
  return result;
}

}  // namespace pte_write
