#include "region_set.h"

namespace lib {

bool RegionSet::overlaps(uint64_t start, uint64_t end) const {
  for (size_t i = 0; i < count_; ++i) {
    if (start < regions_[i].end && regions_[i].start < end) return true;
  }
  return false;
}

bool RegionSet::add(uint64_t start, uint64_t end) {
  if (start >= end || count_ == kCapacity || overlaps(start, end)) return false;
  regions_[count_++] = Region{start, end};
  return true;
}

void RegionSet::erase(size_t index) {
  regions_[index] = regions_[count_ - 1];
  --count_;
}

bool RegionSet::remove(uint64_t start, uint64_t end) {
  for (size_t i = 0; i < count_;) {
    Region& region = regions_[i];
    if (end <= region.start || region.end <= start) {
      ++i;
      continue;
    }
    if (start > region.start && end < region.end) {
      // Punching a hole: keep the lower part here, append the upper part.
      if (count_ == kCapacity) return false;
      regions_[count_++] = Region{end, region.end};
      region.end = start;
      return true;
    }
    if (start <= region.start && end >= region.end) {
      erase(i);
      continue;
    }
    if (start <= region.start)
      region.start = end;
    else
      region.end = start;
    ++i;
  }
  return true;
}

const Region* RegionSet::find(uint64_t address) const {
  for (size_t i = 0; i < count_; ++i) {
    if (address >= regions_[i].start && address < regions_[i].end) return &regions_[i];
  }
  return nullptr;
}

uint64_t RegionSet::find_gap_below(uint64_t limit, uint64_t floor, uint64_t length) const {
  uint64_t candidate_end = limit;
  // Walk down: each time the candidate overlaps a region, move below that region.
  for (;;) {
    if (candidate_end < length || candidate_end - length < floor) return 0;
    uint64_t candidate_start = candidate_end - length;
    const Region* blocker = nullptr;
    for (size_t i = 0; i < count_; ++i) {
      if (candidate_start < regions_[i].end && regions_[i].start < candidate_end) {
        if (blocker == nullptr || regions_[i].start < blocker->start) blocker = &regions_[i];
      }
    }
    if (blocker == nullptr) return candidate_start;
    candidate_end = blocker->start;
  }
}

}  // namespace lib
