#include "emulate/pte_write.h"
#include "emulate/arithmetic_flags.h"

namespace pte_write {
namespace {
using detail::source_value;
using emulate::RegisterOperand;
using emulate::width_mask;

unsigned bit_number(const DecodedWrite& write, const TrapFrame& registers) {
  const uint64_t offset =
      write.source.kind == SourceKind::register_ ? emulate::read(registers, write.source.reg) : write.source.immediate;
  return static_cast<unsigned>(offset & (8u * write.width - 1));
}

RegisterWrite register_write(const TrapFrame& registers, RegisterOperand operand, uint64_t value) {
  return {true, operand.gpr, emulate::merged(emulate::gpr(registers, operand.gpr), operand, value)};
}

detail::Effect compare_exchange(const DecodedWrite& write, const TrapFrame& registers, uint64_t old_value) {
  const RegisterOperand accumulator{emulate::Gpr::rax, write.width, false};
  const uint64_t expected = emulate::read(registers, accumulator);
  detail::Effect effect;
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

detail::Effect logical(const DecodedWrite& write, const TrapFrame& registers, uint64_t old_value) {
  const uint64_t source = source_value(write, registers);
  detail::Effect effect;
  switch (write.operation) {
    case Operation::and_: effect.value = old_value & source; break;
    case Operation::or_: effect.value = old_value | source; break;
    default: effect.value = old_value ^ source; break;
  }
  effect.rflags = emulate::rflags::after_logical(registers.rflags, effect.value, write.width);
  return effect;
}

detail::Effect bit_test_and_modify(const DecodedWrite& write, const TrapFrame& registers, uint64_t old_value) {
  const uint64_t bit = uint64_t{1} << bit_number(write, registers);
  detail::Effect effect;
  effect.value = write.operation == Operation::bts ? (old_value | bit) : (old_value & ~bit);
  effect.rflags = emulate::rflags::after_bit_test(registers.rflags, (old_value & bit) != 0);
  return effect;
}
}  // namespace

detail::Effect detail::perform(const DecodedWrite& write, const TrapFrame& registers, uint64_t old_value) {
  detail::Effect effect;
  effect.rflags = registers.rflags;
  switch (write.operation) {
    case Operation::mov: effect.value = source_value(write, registers); return effect;
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

WriteResult emulate(const uint8_t* bytes, size_t available, const TrapFrame& registers, const SegmentBases& segments,
                    uint64_t fault_address, uint64_t old_entry) {
  const DecodeResult decoded = decode(bytes, available);
  if (decoded.status != Status::ok) {
    WriteResult refusal;
    refusal.status = decoded.status;
    return refusal;
  }
  return execute(decoded.write, registers, segments, fault_address, old_entry);
}

}  // namespace pte_write
