#pragma once
// Typed, bounds-checked reading of the Multiboot v1 information structure. Everything in it is
// a physical address chosen by the boot loader, so every access goes through a
// PhysicalMemoryView that maps a physical range to a pointer or refuses it: the hypervisor
// passes its identity map, the tests a buffer.

#include <stddef.h>
#include <stdint.h>

#include "common/byte_span.h"

namespace boot {

// Maps [physical, physical + size) to readable memory, or returns nullptr if not possible.
struct PhysicalMemoryView {
  const void* (*map)(void* context, uint64_t physical, uint64_t size) = nullptr;
  void* context = nullptr;

  ByteSpan bytes(uint64_t physical, uint64_t size) const {
    const void* pointer = map ? map(context, physical, size) : nullptr;
    return pointer ? ByteSpan(static_cast<const uint8_t*>(pointer), size) : ByteSpan();
  }
};

enum class MultibootError : uint8_t {
  none,
  info_unreadable,
  field_absent,
  string_unreadable,
  modules_unreadable,
  module_index_out_of_range,
  module_range_invalid,
  memory_map_unreadable,
  memory_map_entry_malformed,
};

const char* describe(MultibootError error);

namespace multiboot {
constexpr uint32_t bootloader_magic = 0x2BADB002;  // in eax when the loader jumps to us
constexpr uint32_t flag_memory = 1u << 0;
constexpr uint32_t flag_boot_device = 1u << 1;
constexpr uint32_t flag_command_line = 1u << 2;
constexpr uint32_t flag_modules = 1u << 3;
constexpr uint32_t flag_memory_map = 1u << 6;
constexpr uint32_t flag_loader_name = 1u << 9;
constexpr uint32_t memory_available = 1;  // mmap type of usable RAM
constexpr uint64_t max_string_length = 4096;
}  // namespace multiboot

// A NUL-terminated string read from physical memory (pointer valid as long as the mapping).
struct MultibootString {
  const char* text = nullptr;
  uint64_t length = 0;
};

struct MultibootModule {
  uint32_t start = 0;   // physical, first byte
  uint32_t end = 0;     // physical, one past the last byte
  uint32_t string = 0;  // physical address of the module's command line (0: none)
  constexpr uint32_t size() const { return end - start; }
};

struct MemoryMapEntry {
  uint64_t base = 0;
  uint64_t length = 0;
  uint32_t type = 0;
  constexpr bool is_available() const { return type == multiboot::memory_available; }
  // End of the range, saturated so a bogus length cannot wrap.
  constexpr uint64_t end() const { return base + length < base ? ~uint64_t(0) : base + length; }
};

class MultibootInfo;

// Walks the memory map; each record starts with a `size` field that excludes itself.
class MemoryMapCursor {
 public:
  enum class Step : uint8_t { entry, end, malformed };
  Step next(MemoryMapEntry& entry);

 private:
  friend class MultibootInfo;
  ByteSpan map_;
  uint64_t offset_ = 0;
};

class MultibootInfo {
 public:
  // Reads the fixed part of the structure at `physical`; fails if it cannot be mapped.
  static MultibootError read(const PhysicalMemoryView& memory, uint64_t physical, MultibootInfo& out);

  constexpr uint32_t flags() const { return flags_; }
  constexpr bool has(uint32_t flag) const { return (flags_ & flag) != 0; }

  // KiB below 1 MiB and KiB above 1 MiB (up to the first hole); field_absent if flag 0 clear.
  MultibootError memory_sizes(uint32_t& lower_kib, uint32_t& upper_kib) const;
  MultibootError command_line(MultibootString& out) const;
  MultibootError loader_name(MultibootString& out) const;

  uint32_t module_count() const;  // 0 if flag 3 is clear
  MultibootError module(uint32_t index, MultibootModule& out) const;
  MultibootError module_command_line(const MultibootModule& module, MultibootString& out) const;

  MultibootError memory_map(MemoryMapCursor& out) const;
  // Copies up to `capacity` entries; `count` is how many the map holds.
  MultibootError collect_memory_map(MemoryMapEntry* entries, size_t capacity, size_t& count) const;

  // Reads any NUL-terminated string of at most multiboot::max_string_length bytes.
  MultibootError read_string(uint64_t physical, MultibootString& out) const;

 private:
  PhysicalMemoryView memory_;
  uint32_t flags_ = 0;
  uint32_t mem_lower_ = 0, mem_upper_ = 0;
  uint32_t cmdline_ = 0;
  uint32_t mods_count_ = 0, mods_addr_ = 0;
  uint32_t mmap_length_ = 0, mmap_addr_ = 0;
  uint32_t boot_loader_name_ = 0;
};

}  // namespace boot
