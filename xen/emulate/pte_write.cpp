#include "emulate/pte_write.h"
#include "emulate/arithmetic_flags.h"

namespace pte_write {
namespace {
using emulate::RegisterOperand;
using emulate::width_mask;

uint64_t segment_base(Segment segment, const SegmentBases& bases) {
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
bool has_register_bit_offset(const DecodedWrite& write) {
  return (write.operation == Operation::bts || write.operation == Operation::btr) &&
         write.source.kind == SourceKind::register_;
}

int64_t bit_string_displacement(const DecodedWrite& write, const TrapFrame& registers) {
  const int64_t offset = emulate::sign_extend(emulate::read(registers, write.source.reg), write.width);
  const unsigned bits_log2 = __builtin_ctz(8u * write.width);
  return (offset >> bits_log2) * write.width;  // arithmetic shift: floor division
}

unsigned bit_number(const DecodedWrite& write, const TrapFrame& registers) {
  const uint64_t offset = write.source.kind == SourceKind::register_ ? emulate::read(registers, write.source.reg)
                                                                       : write.source.immediate;
  return static_cast<unsigned>(offset & (8u * write.width - 1));
}

[[gnu::always_inline]] inline uint64_t source_value(const DecodedWrite& write, const TrapFrame& registers) {
  const uint64_t value = write.source.kind == SourceKind::register_ ? emulate::read(registers, write.source.reg)
                                                                      : write.source.immediate;
  return value & width_mask(write.width);
}

// Where the access lies relative to the entry CR2 points at.
Status check_access(uint64_t address, unsigned width, uint64_t fault_address) {
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

RegisterWrite register_write(const TrapFrame& registers, RegisterOperand operand, uint64_t value) {
  return {true, operand.gpr, emulate::merged(emulate::gpr(registers, operand.gpr), operand, value)};
}

Effect compare_exchange(const DecodedWrite& write, const TrapFrame& registers, uint64_t old_value) {
  const RegisterOperand accumulator{emulate::Gpr::rax, write.width, false};
  const uint64_t expected = emulate::read(registers, accumulator);
  Effect effect;
  effect.rflags = emulate::rflags::after_compare(registers.rflags, expected, old_value, write.width);
  if (expected == old_value) {
    effect.value = source_value(write, registers);
  } else {
    // No store: the accumulator receives the value found (SDM: "accumulator <- DEST").
    effect.writes = false;
    effect.value = old_value;
    effect.register_write = register_write(registers, accumulator, old_value);
  }
  return effect;
}

Effect logical(const DecodedWrite& write, const TrapFrame& registers, uint64_t old_value) {
  const uint64_t source = source_value(write, registers);
  Effect effect;
  switch (write.operation) {
    case Operation::and_: effect.value = old_value & source; break;
    case Operation::or_: effect.value = old_value | source; break;
    default: effect.value = old_value ^ source; break;
  }
  effect.rflags = emulate::rflags::after_logical(registers.rflags, effect.value, write.width);
  return effect;
}

Effect bit_test_and_modify(const DecodedWrite& write, const TrapFrame& registers, uint64_t old_value) {
  const uint64_t bit = uint64_t{1} << bit_number(write, registers);
  Effect effect;
  effect.value = write.operation == Operation::bts ? (old_value | bit) : (old_value & ~bit);
  effect.rflags = emulate::rflags::after_bit_test(registers.rflags, (old_value & bit) != 0);
  return effect;
}

Effect perform(const DecodedWrite& write, const TrapFrame& registers, uint64_t old_value) {
  Effect effect;
  effect.rflags = registers.rflags;
  switch (write.operation) {
    case Operation::mov:
      effect.value = source_value(write, registers);
      return effect;
    case Operation::xchg:
      effect.value = source_value(write, registers);
      effect.register_write = register_write(registers, write.source.reg, old_value);
      return effect;
    case Operation::cmpxchg: return compare_exchange(write, registers, old_value);
    case Operation::and_:
    case Operation::or_:
    case Operation::xor_: return logical(write, registers, old_value);
    case Operation::bts:
    case Operation::btr: return bit_test_and_modify(write, registers, old_value);
  }
  return effect;
}

// Inlined into execute: the emulated write's hot path computes the address once per fault.
[[gnu::always_inline]] inline uint64_t linear_address(const DecodedWrite& write, const TrapFrame& registers,
                                                      const SegmentBases& segments) {
  const MemoryOperand& memory = write.destination;
  uint64_t offset = static_cast<uint64_t>(memory.displacement);
  if (memory.rip_relative) offset += registers.rip + write.length;
  if (memory.has_base) offset += emulate::read(registers, memory.base);
  if (memory.has_index) offset += emulate::read(registers, memory.index) * memory.scale;
  if (has_register_bit_offset(write)) offset += static_cast<uint64_t>(bit_string_displacement(write, registers));
  // With a 0x67 prefix the effective address wraps at 4 GiB before the segment base is added.
  offset &= width_mask(memory.address_bytes);
  return segment_base(memory.segment, segments) + offset;
}

WriteResult refusal(Status status) {
  WriteResult result;
  result.status = status;
  return result;
}
}  // namespace

const char* to_string(Status status) {
  switch (status) {
    case Status::ok: return "ok";
    case Status::truncated: return "truncated";
    case Status::undecodable: return "undecodable";
    case Status::unsupported: return "unsupported";
    case Status::not_the_faulting_address: return "not the faulting address";
    case Status::straddles: return "straddles two entries";
    case Status::misaligned: return "misaligned";
  }
  return "?";
}

uint64_t access_address(const DecodedWrite& write, const TrapFrame& registers, const SegmentBases& segments) {
  return linear_address(write, registers, segments);
}

WriteResult execute(const DecodedWrite& write, const TrapFrame& registers, const SegmentBases& segments,
                    uint64_t fault_address, uint64_t old_entry) {
  const uint64_t address = linear_address(write, registers, segments);
  const Status placement = check_access(address, write.width, fault_address);
  if (placement != Status::ok) return refusal(placement);

  const unsigned shift = 8 * static_cast<unsigned>(address & (kEntryBytes - 1));
  const uint64_t mask = width_mask(write.width) << shift;
  const uint64_t old_value = (old_entry & mask) >> shift;
  const Effect effect = perform(write, registers, old_value);

  WriteResult result;
  result.status = Status::ok;
  result.writes = effect.writes;
  // A narrower write replaces its bytes and keeps the rest of the entry as it is now.
  result.new_entry = effect.writes ? (old_entry & ~mask) | ((effect.value << shift) & mask) : old_entry;
  result.length = write.length;
  result.register_write = effect.register_write;
  result.rflags = effect.rflags;
  return result;
}

WriteResult emulate(const uint8_t* bytes, size_t available, const TrapFrame& registers,
                    const SegmentBases& segments, uint64_t fault_address, uint64_t old_entry) {
  const DecodeResult decoded = decode(bytes, available);
  if (decoded.status != Status::ok) return refusal(decoded.status);
  return execute(decoded.write, registers, segments, fault_address, old_entry);
}

}  // namespace pte_write
