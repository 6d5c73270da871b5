// A minimal streaming JSON writer: objects, arrays, strings (escaped), numbers. It tracks
// commas itself so callers cannot produce invalid JSON by forgetting one.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace trace {

class JsonWriter {
 public:
  JsonWriter& begin_object();
  JsonWriter& end_object();
  JsonWriter& begin_array();
  JsonWriter& end_array();
  JsonWriter& key(const std::string& name);
  JsonWriter& value(const std::string& text);
  JsonWriter& value(const char* text) { return value(std::string(text)); }
  JsonWriter& value(uint64_t number);
  JsonWriter& value(int64_t number);
  JsonWriter& value(int number) { return value(int64_t(number)); }
  JsonWriter& value(unsigned number) { return value(uint64_t(number)); }
  JsonWriter& value(double number);
  JsonWriter& value(bool flag);

  template <typename T>
  JsonWriter& field(const std::string& name, const T& v) {
    key(name);
    return value(v);
  }

  const std::string& text() const { return out_; }

 private:
  void separate();
  std::string out_;
  std::vector<bool> first_;  // per open container: no element written yet
  bool after_key_ = false;
};

}  // namespace trace
