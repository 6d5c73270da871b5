#include "kernel/process/user_stack.h"

namespace lib {
namespace {

size_t string_size(const char* text) {
  size_t length = 0;
  while (text[length] != '\0') ++length;
  return length + 1;
}

class StackWriter {
 public:
  StackWriter(uint64_t top, uint8_t* image, size_t capacity) : base_(top - capacity), image_(image) {}
  void bytes(uint64_t address, const void* data, size_t size) {
    const uint8_t* from = static_cast<const uint8_t*>(data);
    for (size_t i = 0; i < size; ++i) image_[address - base_ + i] = from[i];
  }
  void word(uint64_t address, uint64_t value) { bytes(address, &value, sizeof(value)); }

 private:
  uint64_t base_;
  uint8_t* image_;
};

}  // namespace

UserStackLayout build_user_stack(const UserStackInput& input, uint64_t top, uint8_t* image, size_t capacity) {
  UserStackLayout layout{};
  if (input.argc > 256 || input.envc > 256) return layout;
  uint64_t strings = 0;
  for (size_t i = 0; i < input.argc; ++i) strings += string_size(input.argv[i]);
  for (size_t i = 0; i < input.envc; ++i) strings += string_size(input.envp[i]);
  size_t aux_pairs = input.auxc + 2;  // + AT_RANDOM, AT_NULL
  uint64_t words = 1 + input.argc + 1 + input.envc + 1 + 2 * aux_pairs;
  // Everything must fit below top, in the buffer, with room for alignment.
  uint64_t needed = 8 + strings + 16 + 16 + words * 8 + 16;
  if (needed > capacity || needed > top) return layout;

  StackWriter out(top, image, capacity);
  uint64_t end_marker = top - 8;
  out.word(end_marker, 0);
  uint64_t cursor = end_marker - strings;
  uint64_t string_address[2][256];
  for (size_t i = 0; i < input.argc; ++i) {
    string_address[0][i] = cursor;
    size_t size = string_size(input.argv[i]);
    out.bytes(cursor, input.argv[i], size);
    cursor += size;
  }
  for (size_t i = 0; i < input.envc; ++i) {
    string_address[1][i] = cursor;
    size_t size = string_size(input.envp[i]);
    out.bytes(cursor, input.envp[i], size);
    cursor += size;
  }
  layout.random = (end_marker - strings - 16) & ~uint64_t{15};
  out.bytes(layout.random, input.random, 16);

  uint64_t sp = (layout.random - words * 8) & ~uint64_t{15};
  layout.rsp = sp;
  out.word(sp, input.argc);
  layout.argv = sp + 8;
  for (size_t i = 0; i < input.argc; ++i) out.word(layout.argv + 8 * i, string_address[0][i]);
  out.word(layout.argv + 8 * input.argc, 0);
  layout.envp = layout.argv + 8 * (input.argc + 1);
  for (size_t i = 0; i < input.envc; ++i) out.word(layout.envp + 8 * i, string_address[1][i]);
  out.word(layout.envp + 8 * input.envc, 0);
  layout.auxv = layout.envp + 8 * (input.envc + 1);
  uint64_t pair = layout.auxv;
  for (size_t i = 0; i < input.auxc; ++i, pair += 16) {
    out.word(pair, input.auxv[i][0]);
    out.word(pair + 8, input.auxv[i][1]);
  }
  out.word(pair, kAtRandomKey);
  out.word(pair + 8, layout.random);
  out.word(pair + 16, 0);
  out.word(pair + 24, 0);
  return layout;
}

}  // namespace lib
