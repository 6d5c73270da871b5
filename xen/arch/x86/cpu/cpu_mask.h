// A set of CPUs by number, one bit each in a 64-bit word: the targets of a cross-CPU call or a
// TLB flush, a domain's dirty CPUs. Pure, unit-tested on the host
// (tests/unit/mm_tlb_flush_filter_test.cpp). MAX_CPUS (8) fits with room to grow to 64; a CPU
// number of 64 or more is never in a mask (only() gives the empty mask, add() does nothing).
// A mask may name CPUs that are not online: its users ignore those (cross_cpu::on_cpus
// intersects with the online CPUs, mm::cpus_needing_flush with the CPU count it is given).
#pragma once
#include <stdint.h>

class CpuMask {
 public:
  static constexpr unsigned capacity = 64;
  constexpr CpuMask() = default;
  static constexpr CpuMask from_bits(uint64_t bits) { return CpuMask(bits); }
  static constexpr CpuMask only(unsigned cpu) { return CpuMask(cpu < capacity ? uint64_t(1) << cpu : 0); }
  // CPUs 0 .. count-1.
  static constexpr CpuMask first(unsigned count) {
    return CpuMask(count >= capacity ? ~uint64_t(0) : (uint64_t(1) << count) - 1);
  }

  constexpr bool contains(unsigned cpu) const { return cpu < capacity && (bits_ >> cpu) & 1; }
  constexpr bool empty() const { return bits_ == 0; }
  constexpr unsigned count() const { return unsigned(__builtin_popcountll(bits_)); }
  constexpr uint64_t bits() const { return bits_; }
  constexpr void add(unsigned cpu) { bits_ |= only(cpu).bits_; }
  constexpr void remove(unsigned cpu) { bits_ &= ~only(cpu).bits_; }
  constexpr CpuMask without(unsigned cpu) const { return CpuMask(bits_ & ~only(cpu).bits_); }
  constexpr CpuMask operator&(CpuMask other) const { return CpuMask(bits_ & other.bits_); }
  constexpr CpuMask operator|(CpuMask other) const { return CpuMask(bits_ | other.bits_); }
  constexpr bool operator==(const CpuMask&) const = default;
  // The lowest CPU in the set (capacity if empty): `for (cpu = m.next(0); cpu < capacity; cpu = m.next(cpu + 1))`.
  constexpr unsigned next(unsigned from) const {
    if (from >= capacity) return capacity;
    uint64_t rest = bits_ >> from;
    return rest ? from + unsigned(__builtin_ctzll(rest)) : capacity;
  }

 private:
  constexpr explicit CpuMask(uint64_t bits) : bits_(bits) {}
  uint64_t bits_ = 0;
};

// Every CPU of a mask, lowest first.
template <typename Function>
constexpr void for_each_cpu(CpuMask mask, Function&& function) {
  for (unsigned cpu = mask.next(0); cpu < CpuMask::capacity; cpu = mask.next(cpu + 1)) function(cpu);
}
