#include "arch/x86/boot/multiboot_info.h"

namespace boot {

const char* describe(MultibootError error) {
  switch (error) {
    case MultibootError::none: return "no error";
    case MultibootError::info_unreadable: return "multiboot info structure not readable";
    case MultibootError::field_absent: return "multiboot field not provided by the loader";
    case MultibootError::string_unreadable: return "multiboot string unreadable or unterminated";
    case MultibootError::modules_unreadable: return "multiboot module list unreadable";
    case MultibootError::module_index_out_of_range: return "multiboot module index out of range";
    case MultibootError::module_range_invalid: return "multiboot module ends before it starts";
    case MultibootError::memory_map_unreadable: return "multiboot memory map unreadable";
    case MultibootError::memory_map_entry_malformed: return "multiboot memory map entry malformed";
  }
  return "unknown multiboot error";
}

namespace {

// Byte offsets in the Multiboot v1 information structure and its tables (Multiboot spec 0.6.96).
namespace info {
constexpr uint64_t flags = 0, mem_lower = 4, mem_upper = 8, cmdline = 16, mods_count = 20, mods_addr = 24,
                   mmap_length = 44, mmap_addr = 48, boot_loader_name = 64;
constexpr uint64_t size = 68;
}  // namespace info

namespace module_entry {
constexpr uint64_t mod_start = 0, mod_end = 4, string = 8;
constexpr uint64_t size = 16;
}  // namespace module_entry

namespace mmap_entry {
constexpr uint64_t size_field = 4;                   // the leading `size`, not counted by itself
constexpr uint64_t base = 0, length = 8, type = 16;  // relative to after the size field
constexpr uint64_t minimum_size = 20;
}  // namespace mmap_entry

}  // namespace

MultibootError MultibootInfo::read(const PhysicalMemoryView& memory, uint64_t physical, MultibootInfo& out) {
  ByteSpan bytes = memory.bytes(physical, info::size);
  if (bytes.empty()) return MultibootError::info_unreadable;
  MultibootInfo parsed;
  parsed.memory_ = memory;
  parsed.flags_ = bytes.u32(info::flags);
  parsed.mem_lower_ = bytes.u32(info::mem_lower);
  parsed.mem_upper_ = bytes.u32(info::mem_upper);
  parsed.cmdline_ = bytes.u32(info::cmdline);
  parsed.mods_count_ = bytes.u32(info::mods_count);
  parsed.mods_addr_ = bytes.u32(info::mods_addr);
  parsed.mmap_length_ = bytes.u32(info::mmap_length);
  parsed.mmap_addr_ = bytes.u32(info::mmap_addr);
  parsed.boot_loader_name_ = bytes.u32(info::boot_loader_name);
  out = parsed;
  return MultibootError::none;
}

MultibootError MultibootInfo::memory_sizes(uint32_t& lower_kib, uint32_t& upper_kib) const {
  if (!has(multiboot::flag_memory)) return MultibootError::field_absent;
  lower_kib = mem_lower_;
  upper_kib = mem_upper_;
  return MultibootError::none;
}

MultibootError MultibootInfo::read_string(uint64_t physical, MultibootString& out) const {
  // The length is unknown, so map one byte at a time: a string may end just before an
  // unmapped page, and mapping a longer range would wrongly fail there.
  for (uint64_t length = 0; length < multiboot::max_string_length; ++length) {
    ByteSpan byte = memory_.bytes(physical + length, 1);
    if (byte.empty()) return MultibootError::string_unreadable;
    if (byte.u8(0) != 0) continue;
    ByteSpan whole = memory_.bytes(physical, length + 1);
    if (whole.empty()) return MultibootError::string_unreadable;
    out = MultibootString{reinterpret_cast<const char*>(whole.data()), length};
    return MultibootError::none;
  }
  return MultibootError::string_unreadable;
}

MultibootError MultibootInfo::command_line(MultibootString& out) const {
  if (!has(multiboot::flag_command_line)) return MultibootError::field_absent;
  return read_string(cmdline_, out);
}

MultibootError MultibootInfo::loader_name(MultibootString& out) const {
  if (!has(multiboot::flag_loader_name)) return MultibootError::field_absent;
  return read_string(boot_loader_name_, out);
}

uint32_t MultibootInfo::module_count() const { return has(multiboot::flag_modules) ? mods_count_ : 0; }

MultibootError MultibootInfo::module(uint32_t index, MultibootModule& out) const {
  if (index >= module_count()) return MultibootError::module_index_out_of_range;
  ByteSpan entry = memory_.bytes(uint64_t(mods_addr_) + uint64_t(index) * module_entry::size, module_entry::size);
  if (entry.empty()) return MultibootError::modules_unreadable;
  MultibootModule parsed{entry.u32(module_entry::mod_start), entry.u32(module_entry::mod_end),
                         entry.u32(module_entry::string)};
  if (parsed.end < parsed.start) return MultibootError::module_range_invalid;
  out = parsed;
  return MultibootError::none;
}

MultibootError MultibootInfo::module_command_line(const MultibootModule& module, MultibootString& out) const {
  if (module.string == 0) return MultibootError::field_absent;
  return read_string(module.string, out);
}

MultibootError MultibootInfo::memory_map(MemoryMapCursor& out) const {
  if (!has(multiboot::flag_memory_map)) return MultibootError::field_absent;
  ByteSpan map = memory_.bytes(mmap_addr_, mmap_length_);
  if (map.empty() && mmap_length_ != 0) return MultibootError::memory_map_unreadable;
  out = MemoryMapCursor{};
  out.map_ = map;
  return MultibootError::none;
}

MultibootError MultibootInfo::collect_memory_map(MemoryMapEntry* entries, size_t capacity, size_t& count) const {
  MemoryMapCursor cursor;
  MultibootError error = memory_map(cursor);
  if (error != MultibootError::none) return error;
  count = 0;
  MemoryMapEntry entry;
  for (;;) {
    MemoryMapCursor::Step step = cursor.next(entry);
    if (step == MemoryMapCursor::Step::end) return MultibootError::none;
    if (step == MemoryMapCursor::Step::malformed) return MultibootError::memory_map_entry_malformed;
    if (count < capacity) entries[count] = entry;
    ++count;
  }
}

MemoryMapCursor::Step MemoryMapCursor::next(MemoryMapEntry& entry) {
  if (offset_ >= map_.size()) return Step::end;
  if (!map_.contains(offset_, mmap_entry::size_field)) return Step::malformed;
  uint64_t record_size = map_.u32(offset_);
  uint64_t body = offset_ + mmap_entry::size_field;
  if (record_size < mmap_entry::minimum_size || !map_.contains(body, record_size)) return Step::malformed;
  entry = MemoryMapEntry{map_.u64(body + mmap_entry::base), map_.u64(body + mmap_entry::length),
                         map_.u32(body + mmap_entry::type)};
  offset_ = body + record_size;
  return Step::entry;
}

}  // namespace boot
