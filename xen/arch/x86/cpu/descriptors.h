// Typed x86-64 segment, system and gate descriptors and the 64-bit TSS.
#pragma once
#include <stdint.h>

// An 8-byte code or data segment descriptor. In long mode only the type, DPL, present and
// L bits of code segments matter; data segments keep base 0 / limit 4 GiB for compatibility.
class SegmentDescriptor {
 public:
  constexpr SegmentDescriptor() = default;
  static constexpr SegmentDescriptor code64(unsigned dpl) {
    return SegmentDescriptor(0x00af9a000000ffffULL | dpl_bits(dpl));
  }
  static constexpr SegmentDescriptor code32(unsigned dpl) {
    return SegmentDescriptor(0x00cf9a000000ffffULL | dpl_bits(dpl));
  }
  static constexpr SegmentDescriptor data(unsigned dpl) {
    return SegmentDescriptor(0x00cf92000000ffffULL | dpl_bits(dpl));
  }
  constexpr uint64_t raw() const { return raw_; }
  constexpr bool present() const { return raw_ & (1ULL << 47); }
  constexpr unsigned dpl() const { return (raw_ >> 45) & 3; }

 private:
  constexpr explicit SegmentDescriptor(uint64_t raw) : raw_(raw) {}
  static constexpr uint64_t dpl_bits(unsigned dpl) { return uint64_t(dpl & 3) << 45; }
  uint64_t raw_ = 0;
};

// A 16-byte system descriptor (the TSS) occupies two GDT slots.
struct SystemDescriptor {
  uint64_t low, high;
  static constexpr SystemDescriptor tss(uint64_t base, uint32_t limit) {
    uint64_t low = (limit & 0xffffULL) | ((base & 0xffffffULL) << 16) | (0x89ULL << 40) |
                   ((uint64_t(limit >> 16) & 0xf) << 48) | (((base >> 24) & 0xffULL) << 56);
    return {low, base >> 32};
  }
};

// A 16-byte interrupt gate. DPL 3 lets ring 3 raise the vector with `int n` (int3, into).
struct GateDescriptor {
  uint16_t offset_low;
  uint16_t selector;
  uint8_t ist;
  uint8_t type_attributes;
  uint16_t offset_middle;
  uint32_t offset_high;
  uint32_t reserved;

  static constexpr GateDescriptor interrupt(uint64_t handler, uint16_t selector, unsigned dpl, unsigned ist) {
    return {uint16_t(handler),       selector, uint8_t(ist), uint8_t(0x8e | ((dpl & 3) << 5)), uint16_t(handler >> 16),
            uint32_t(handler >> 32), 0};
  }
};
static_assert(sizeof(GateDescriptor) == 16);

struct __attribute__((packed)) TaskStateSegment {
  uint32_t reserved0;
  uint64_t rsp[3];
  uint64_t reserved1;
  uint64_t ist[7];
  uint64_t reserved2;
  uint16_t reserved3;
  uint16_t io_map_base;
};
static_assert(sizeof(TaskStateSegment) == 104);

struct __attribute__((packed)) DescriptorTablePointer {
  uint16_t limit;
  uint64_t base;
};
