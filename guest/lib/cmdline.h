#pragma once
// Kernel command line: space-separated words, options as key=value.
#include <stddef.h>

namespace lib {

// Copies the value of the last "key=value" word into value (NUL-terminated, truncated to
// capacity). Returns false if the key is absent. A bare "key" yields an empty value.
bool cmdline_value(const char* cmdline, const char* key, char* value, size_t capacity);

// The words after a lone "--" on the command line, for init's argv (Linux's convention).
// They are copied into `storage` (NUL-separated) and pointed to from `words`; returns how
// many there were, at most `max_words`; words that do not fit in `storage` are dropped.
size_t cmdline_init_args(const char* cmdline, char* storage, size_t capacity, const char** words, size_t max_words);

bool string_equal(const char* a, const char* b);

}  // namespace lib
