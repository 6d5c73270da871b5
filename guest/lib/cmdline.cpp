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

namespace {
bool is_blank(char c) { return c == ' ' || c == '\t'; }
const char* skip_blanks(const char* p) {
  while (*p && is_blank(*p)) ++p;
  return p;
}
const char* word_end(const char* p) {
  while (*p && !is_blank(*p)) ++p;
  return p;
}
}  // namespace

size_t cmdline_init_args(const char* cmdline, char* storage, size_t capacity, const char** words, size_t max_words) {
  const char* p = skip_blanks(cmdline);
  while (*p && !(p[0] == '-' && p[1] == '-' && (p[2] == '\0' || is_blank(p[2])))) p = skip_blanks(word_end(p));
  if (!*p) return 0;
  p = skip_blanks(p + 2);
  size_t count = 0, used = 0;
  while (*p && count < max_words) {
    const char* end = word_end(p);
    size_t length = size_t(end - p);
    if (used + length + 1 > capacity) break;
    for (size_t i = 0; i < length; ++i) storage[used + i] = p[i];
    storage[used + length] = '\0';
    words[count++] = storage + used;
    used += length + 1;
    p = skip_blanks(end);
  }
  return count;
}

}  // namespace lib
