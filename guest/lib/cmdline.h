#pragma once
// Kernel command line: space-separated words, options as key=value.
#include <stddef.h>

namespace lib {

// Copies the value of the last "key=value" word into value (NUL-terminated, truncated to
// capacity). Returns false if the key is absent. A bare "key" yields an empty value.
bool cmdline_value(const char* cmdline, const char* key, char* value, size_t capacity);

bool string_equal(const char* a, const char* b);

}  // namespace lib
