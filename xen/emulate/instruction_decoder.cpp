#include "emulate/instruction_decoder.h"
#include <Zydis/Decoder.h>
#include <Zydis/Mnemonic.h>
#include "console/console.h"

namespace instruction_decoder {
Decoded decode_64(const uint8_t* bytes, size_t length) {
  ZydisDecoder decoder;
  Decoded result;
  if (ZYAN_FAILED(ZydisDecoderInit(&decoder, ZYDIS_MACHINE_MODE_LONG_64, ZYDIS_STACK_WIDTH_64))) return result;
  ZydisDecodedInstruction instruction;
  ZydisDecodedOperand operands[ZYDIS_MAX_OPERAND_COUNT];
  if (ZYAN_FAILED(ZydisDecoderDecodeFull(&decoder, bytes, length, &instruction, operands))) return result;
  result.ok = true;
  result.length = instruction.length;
  result.mnemonic = ZydisMnemonicGetString(instruction.mnemonic);
  result.operand_count = instruction.operand_count_visible;
  return result;
}

bool self_check() {
  const uint8_t mov_to_pte[] = {0x48, 0x89, 0x07};  // mov %rax, (%rdi): a typical PTE store
  Decoded d = decode_64(mov_to_pte, sizeof(mov_to_pte));
  bool ok = d.ok && d.length == 3 && d.operand_count == 2 && __builtin_strcmp(d.mnemonic, "mov") == 0;
  printk("Zydis decoder: %s (%s, %u bytes)\n", ok ? "ok" : "FAILED", d.ok ? d.mnemonic : "-", d.length);
  return ok;
}
}  // namespace instruction_decoder
