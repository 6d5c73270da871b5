#include "ptwr/table_snapshot.h"

namespace ptwr {
namespace {
// A string move of whole entries: one instruction an entry where a loop of loads and stores
// is two (memcpy here is byte-wise: eight).
void copy_entries(uint64_t* to, const uint64_t* from, uint64_t count) {
  asm volatile("rep movsq" : "+D"(to), "+S"(from), "+c"(count) : : "memory");
}
}  // namespace

namespace detail {
uint64_t line_or_out_of_line(const uint64_t* line) { return mm::line_or(line); }
}  // namespace detail

BlockMask capture_snapshot(const uint64_t* table, uint64_t* snapshot, BlockMask blocks) {
  detail::for_each_run(blocks, [&](unsigned start, unsigned length) {
    copy_entries(snapshot + start * kBlockEntries, table + start * kBlockEntries, length * kBlockEntries);
  });
  return blocks;
}

}  // namespace ptwr
