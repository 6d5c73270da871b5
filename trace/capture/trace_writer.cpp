#include "trace/capture/trace_writer.h"

#include <cstring>

namespace trace {

size_t whole_records_prefix(const uint8_t* bytes, size_t size) {
  size_t offset = 0;
  while (size - offset >= 4) {
    uint32_t word;
    std::memcpy(&word, bytes + offset, 4);
    size_t record = RecordHeader(word).size_bytes();
    if (record > size - offset) break;
    offset += record;
  }
  return offset;
}

bool TraceWriter::emit(const uint8_t* data, size_t size) {
  written_ += size;
  if (!out_) {
    memory_.insert(memory_.end(), data, data + size);
    return true;
  }
  return std::fwrite(data, 1, size, out_) == size;
}

bool TraceWriter::window(uint32_t cpu, const uint8_t* records, size_t size) {
  uint32_t header[3];
  encode_record(CpuChange{cpu, uint32_t(size)}.fields(), header);
  return emit(reinterpret_cast<const uint8_t*>(header), sizeof header) && emit(records, size);
}

bool TraceWriter::window(uint32_t cpu, const std::vector<RecordFields>& records) {
  std::vector<uint32_t> words;
  for (const RecordFields& r : records) {
    uint32_t buffer[kMaxRecordBytes / 4];
    size_t n = encode_record(r, buffer);
    words.insert(words.end(), buffer, buffer + n);
  }
  return window(cpu, reinterpret_cast<const uint8_t*>(words.data()), words.size() * 4);
}

}  // namespace trace
