#pragma once
// A small set of disjoint, page-aligned address ranges [start, end): the parts of a user
// address space that may be demand-paged (heap, stack, anonymous mmap). Fixed capacity,
// no allocation, so it works in the kernel as it is.
#include <stddef.h>
#include <stdint.h>

namespace lib {

struct Region {
  uint64_t start;
  uint64_t end;
};

class RegionSet {
 public:
  static constexpr size_t kCapacity = 64;

  // Adds [start, end); fails (false) if it overlaps an existing region, is empty or the set
  // is full. Adjacent regions are kept separate (they may have different owners).
  bool add(uint64_t start, uint64_t end);
  // Removes [start, end) from every region it touches, splitting one if needed. False only
  // when a split would need more capacity than there is.
  bool remove(uint64_t start, uint64_t end);
  const Region* find(uint64_t address) const;
  bool overlaps(uint64_t start, uint64_t end) const;
  // Highest free gap of `length` bytes with end <= limit and start >= floor; 0 if none.
  uint64_t find_gap_below(uint64_t limit, uint64_t floor, uint64_t length) const;
  size_t size() const { return count_; }
  const Region& operator[](size_t i) const { return regions_[i]; }

 private:
  void erase(size_t index);
  Region regions_[kCapacity] = {};
  size_t count_ = 0;
};

}  // namespace lib
