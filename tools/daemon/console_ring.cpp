// Console ring arithmetic (console_ring.h).
#include "tools/daemon/console_ring.h"

#include <algorithm>

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
