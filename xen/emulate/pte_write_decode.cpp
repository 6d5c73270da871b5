// pte_write::decode: Zydis's view of an instruction, reduced to a DecodedWrite or refused.
// Everything not known to be a plain read-modify-write of one general-purpose memory operand
// is refused here, so execute() never meets an instruction it would get wrong.
#include <Zydis/Decoder.h>
#include <Zydis/Register.h>
#include "emulate/pte_write.h"

namespace pte_write {
namespace {
using emulate::RegisterOperand;

constexpr ZydisMachineMode kMode = ZYDIS_MACHINE_MODE_LONG_64;

struct Decoded {
  ZydisDecodedInstruction instruction;
  ZydisDecodedOperand operands[ZYDIS_MAX_OPERAND_COUNT];
};

DecodeResult refused(Status status) {
  DecodeResult result;
  result.status = status;
  return result;
}

// The mnemonics guest kernels use on page-table entries (set_pte, xchg-based
// ptep_get_and_clear, cmpxchg loops, set_bit/clear_bit and their constant-mask and/or forms).
bool operation_of(ZydisMnemonic mnemonic, Operation& operation) {
  switch (mnemonic) {
    case ZYDIS_MNEMONIC_MOV: operation = Operation::mov; return true;
    case ZYDIS_MNEMONIC_XCHG: operation = Operation::xchg; return true;
    case ZYDIS_MNEMONIC_CMPXCHG: operation = Operation::cmpxchg; return true;
    case ZYDIS_MNEMONIC_AND: operation = Operation::and_; return true;
    case ZYDIS_MNEMONIC_OR: operation = Operation::or_; return true;
    case ZYDIS_MNEMONIC_XOR: operation = Operation::xor_; return true;
    case ZYDIS_MNEMONIC_BTS: operation = Operation::bts; return true;
    case ZYDIS_MNEMONIC_BTR: operation = Operation::btr; return true;
    default: return false;
  }
}

bool is_general_register(ZydisRegister reg) {
  switch (ZydisRegisterGetClass(reg)) {
    case ZYDIS_REGCLASS_GPR8:
    case ZYDIS_REGCLASS_GPR16:
    case ZYDIS_REGCLASS_GPR32:
    case ZYDIS_REGCLASS_GPR64: return true;
    default: return false;
  }
}

bool is_high_byte(ZydisRegister reg) {
  return reg == ZYDIS_REGISTER_AH || reg == ZYDIS_REGISTER_CH || reg == ZYDIS_REGISTER_DH || reg == ZYDIS_REGISTER_BH;
}

// Precondition: is_general_register(reg).
RegisterOperand register_operand(ZydisRegister reg) {
  const ZydisRegister whole = ZydisRegisterGetLargestEnclosing(kMode, reg);
  RegisterOperand operand;
  operand.gpr = static_cast<emulate::Gpr>(whole - ZYDIS_REGISTER_RAX);
  operand.bytes = static_cast<uint8_t>(ZydisRegisterGetWidth(kMode, reg) / 8);
  operand.high_byte = is_high_byte(reg);
  return operand;
}

bool is_memory(const ZydisDecodedOperand& operand) { return operand.type == ZYDIS_OPERAND_TYPE_MEMORY; }

// The one memory operand, which must be a plain data access that is written; null if there
// is none, more than one (movs, push/pop m), or it is an address computation (lea-like).
const ZydisDecodedOperand* written_memory_operand(const Decoded& decoded) {
  const ZydisDecodedOperand* found = nullptr;
  for (unsigned i = 0; i < decoded.instruction.operand_count; ++i) {
    const ZydisDecodedOperand& operand = decoded.operands[i];
    if (!is_memory(operand)) continue;
    if (found != nullptr) return nullptr;
    found = &operand;
  }
  if (found == nullptr || found->mem.type != ZYDIS_MEMOP_TYPE_MEM) return nullptr;
  if ((found->actions & ZYDIS_OPERAND_ACTION_MASK_WRITE) == 0) return nullptr;
  return found;
}

bool is_address_register(ZydisRegister reg, unsigned address_bytes) {
  const ZydisRegisterClass expected = address_bytes == 8 ? ZYDIS_REGCLASS_GPR64 : ZYDIS_REGCLASS_GPR32;
  return ZydisRegisterGetClass(reg) == expected;
}

Segment segment_of(ZydisRegister reg) {
  if (reg == ZYDIS_REGISTER_FS) return Segment::fs;
  if (reg == ZYDIS_REGISTER_GS) return Segment::gs;
  return Segment::flat;  // 64-bit mode ignores the bases of CS, DS, ES and SS
}

bool memory_operand(const ZydisDecodedInstruction& instruction, const ZydisDecodedOperandMem& mem, MemoryOperand& out) {
  out.address_bytes = static_cast<uint8_t>(instruction.address_width / 8);
  if (out.address_bytes != 8 && out.address_bytes != 4) return false;
  out.segment = segment_of(mem.segment);
  out.displacement = mem.disp.has_displacement ? mem.disp.value : 0;
  if (mem.base == ZYDIS_REGISTER_RIP || mem.base == ZYDIS_REGISTER_EIP) {
    out.rip_relative = true;
  } else if (mem.base != ZYDIS_REGISTER_NONE) {
    if (!is_address_register(mem.base, out.address_bytes)) return false;
    out.has_base = true;
    out.base = register_operand(mem.base);
  }
  if (mem.index != ZYDIS_REGISTER_NONE) {
    if (!is_address_register(mem.index, out.address_bytes)) return false;
    out.has_index = true;
    out.index = register_operand(mem.index);
    out.scale = mem.scale;
  }
  return true;
}

// The explicit operand besides the memory one: a general register or an immediate. Segment,
// control, vector and other registers (mov m16, sreg) are refused.
bool source_operand(const Decoded& decoded, const ZydisDecodedOperand* memory, SourceOperand& out) {
  for (unsigned i = 0; i < decoded.instruction.operand_count_visible; ++i) {
    const ZydisDecodedOperand& operand = decoded.operands[i];
    if (&operand == memory) continue;
    if (operand.type == ZYDIS_OPERAND_TYPE_REGISTER && is_general_register(operand.reg.value)) {
      out.kind = SourceKind::register_;
      out.reg = register_operand(operand.reg.value);
      return true;
    }
    if (operand.type == ZYDIS_OPERAND_TYPE_IMMEDIATE) {
      out.kind = SourceKind::immediate;
      out.immediate = operand.imm.value.u;  // Zydis has already sign-extended signed forms
      return true;
    }
    return false;
  }
  return false;
}

bool needs_register_source(Operation operation) {
  return operation == Operation::xchg || operation == Operation::cmpxchg;
}

bool decode_with_zydis(const uint8_t* bytes, size_t available, Decoded& decoded, Status& status) {
  ZydisDecoder decoder;
  if (ZYAN_FAILED(ZydisDecoderInit(&decoder, kMode, ZYDIS_STACK_WIDTH_64))) {
    status = Status::undecodable;
    return false;
  }
  const ZyanStatus result = ZydisDecoderDecodeFull(&decoder, bytes, available, &decoded.instruction, decoded.operands);
  if (result == ZYDIS_STATUS_NO_MORE_DATA)
    status = Status::truncated;
  else if (ZYAN_FAILED(result))
    status = Status::undecodable;
  else
    status = Status::ok;
  return status == Status::ok;
}
}  // namespace

DecodeResult decode(const uint8_t* bytes, size_t available) {
  if (available == 0) return refused(Status::truncated);
  if (available > kMaxInstructionBytes) available = kMaxInstructionBytes;
  Decoded decoded;
  Status status;
  if (!decode_with_zydis(bytes, available, decoded, status)) return refused(status);
  const ZydisDecodedInstruction& instruction = decoded.instruction;

  DecodeResult result;
  DecodedWrite& write = result.write;
  // Legacy encoding only: VEX/EVEX/XOP forms (vector stores) never touch page tables.
  if (instruction.encoding != ZYDIS_INSTRUCTION_ENCODING_LEGACY) return refused(Status::unsupported);
  if (!operation_of(instruction.mnemonic, write.operation)) return refused(Status::unsupported);

  const ZydisDecodedOperand* memory = written_memory_operand(decoded);
  if (memory == nullptr) return refused(Status::unsupported);
  const unsigned width = memory->size / 8;
  if (width != 1 && width != 2 && width != 4 && width != 8) return refused(Status::unsupported);
  write.width = static_cast<uint8_t>(width);
  if (!memory_operand(instruction, memory->mem, write.destination)) return refused(Status::unsupported);
  if (!source_operand(decoded, memory, write.source)) return refused(Status::unsupported);
  if (needs_register_source(write.operation) && write.source.kind != SourceKind::register_)
    return refused(Status::unsupported);

  write.length = instruction.length;
  write.locked = (instruction.attributes & ZYDIS_ATTRIB_HAS_LOCK) != 0;
  result.status = Status::ok;
  return result;
}

}  // namespace pte_write
