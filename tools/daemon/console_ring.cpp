// Console ring arithmetic (console_ring.h).
#include "tools/daemon/console_ring.h"

#include <algorithm>
#include <array>

namespace pvhv::daemon {

OutputDrain drain_output(uint32_t cons, uint32_t prod, std::span<const char> out_ring) {
  OutputDrain drain;
  uint32_t size = uint32_t(out_ring.size());
  if (size == 0) return drain;
  uint32_t pending = prod - cons;  // unsigned: the indexes run freely and wrap at 2^32
  if (pending > size) {
    drain.bad_index = true;
    cons = prod - size;
    pending = size;
  }
  drain.bytes.reserve(pending);
  for (uint32_t i = 0; i < pending; ++i) drain.bytes.push_back(out_ring[(cons + i) % size]);
  drain.cons = prod;
  return drain;
}

std::optional<ConsoleRead> read_console(const ConsolePageReader& read) {
  uint32_t indexes[4];  // in_cons, in_prod, out_cons, out_prod: contiguous from kInConsOffset
  static_assert(kOutProdOffset == kInConsOffset + 3 * sizeof(uint32_t));
  if (!read(uint32_t(kInConsOffset), indexes, sizeof indexes)) return std::nullopt;
  ConsoleRead result;
  result.in_cons = indexes[0];
  result.in_prod = indexes[1];
  const uint32_t out_cons = indexes[2], out_prod = indexes[3];
  if (out_cons == out_prod) {
    result.output.cons = out_cons;
    return result;
  }
  std::array<char, kConsoleOutBytes> out;
  if (!read(uint32_t(kConsoleOutOffset), out.data(), out.size())) return std::nullopt;
  result.output = drain_output(out_cons, out_prod, out);
  return result;
}

InputFill fill_input(uint32_t cons, uint32_t prod, std::string_view pending) {
  InputFill fill;
  uint32_t used = prod - cons;
  uint32_t room = used > kConsoleInBytes ? 0 : uint32_t(kConsoleInBytes - used);
  fill.taken = std::min<size_t>(room, pending.size());
  fill.bytes.assign(pending.substr(0, fill.taken));
  fill.offset = prod % kConsoleInBytes;
  fill.prod = prod + uint32_t(fill.taken);
  return fill;
}

}  // namespace pvhv::daemon
