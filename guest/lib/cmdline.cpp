#include "cmdline.h"

namespace lib {

bool string_equal(const char* a, const char* b) {
  while (*a != '\0' && *a == *b) {
    ++a;
    ++b;
  }
  return *a == *b;
}

namespace {

// If word (ending at a space or NUL) is "key" or "key=...", returns where its value starts.
const char* match_key(const char* word, const char* key) {
  while (*key != '\0' && *word == *key) {
    ++word;
    ++key;
  }
  if (*key != '\0') return nullptr;
  if (*word == '=') return word + 1;
  if (*word == ' ' || *word == '\0') return word;
  return nullptr;
}

}  // namespace

bool cmdline_value(const char* cmdline, const char* key, char* value, size_t capacity) {
  bool found = false;
  const char* p = cmdline;
  while (p != nullptr && *p != '\0') {
    while (*p == ' ') ++p;
    if (*p == '\0') break;
    if (const char* start = match_key(p, key)) {
      found = true;
      size_t length = 0;
      while (start[length] != ' ' && start[length] != '\0') {
        if (length + 1 < capacity) value[length] = start[length];
        ++length;
      }
      if (capacity > 0) value[length + 1 < capacity ? length : capacity - 1] = '\0';
    }
    while (*p != ' ' && *p != '\0') ++p;
  }
  return found;
}

}  // namespace lib
