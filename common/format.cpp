#include "common/format.h"
#include <stdint.h>

namespace {
class Output {
 public:
  Output(char* buffer, size_t size) : buffer_(buffer), size_(size) {}
  void put(char c) {
    if (length_ + 1 < size_) buffer_[length_] = c;
    ++length_;
  }
  void repeat(char c, int count) {
    while (count-- > 0) put(c);
  }
  size_t finish() {
    if (size_) buffer_[length_ < size_ ? length_ : size_ - 1] = '\0';
    return length_;
  }

 private:
  char* buffer_;
  size_t size_;
  size_t length_ = 0;
};

struct Spec {
  bool left = false, zero = false;
  int width = 0;
  int length = 0;  // 0: int, 1: long, 2: long long, -1: short
};

void put_padded(Output& out, const Spec& spec, const char* text, int text_length, bool numeric) {
  int pad = spec.width - text_length;
  if (!spec.left) {
    char fill = (spec.zero && numeric) ? '0' : ' ';
    if (fill == '0' && text_length && text[0] == '-') {
      out.put('-');
      ++text;
      --text_length;
    }
    out.repeat(fill, pad);
  }
  for (int i = 0; i < text_length; ++i) out.put(text[i]);
  if (spec.left) out.repeat(' ', pad);
}

int render_unsigned(char* digits_end, uint64_t value, unsigned base, bool upper) {
  const char* alphabet = upper ? "0123456789ABCDEF" : "0123456789abcdef";
  int n = 0;
  do {
    *--digits_end = alphabet[value % base];
    value /= base;
    ++n;
  } while (value);
  return n;
}

void put_number(Output& out, const Spec& spec, uint64_t magnitude, bool negative, unsigned base, bool upper) {
  char text[24];
  char* end = text + sizeof(text);
  int n = render_unsigned(end, magnitude, base, upper);
  if (negative) {
    *(end - n - 1) = '-';
    ++n;
  }
  put_padded(out, spec, end - n, n, true);
}

int64_t signed_argument(va_list& args, int length) {
  if (length >= 2) return va_arg(args, long long);
  if (length == 1) return va_arg(args, long);
  return va_arg(args, int);
}

uint64_t unsigned_argument(va_list& args, int length) {
  if (length >= 2) return va_arg(args, unsigned long long);
  if (length == 1) return va_arg(args, unsigned long);
  return va_arg(args, unsigned int);
}

const char* parse_spec(const char* p, Spec& spec) {
  for (;; ++p) {
    if (*p == '-')
      spec.left = true;
    else if (*p == '0')
      spec.zero = true;
    else
      break;
  }
  while (*p >= '0' && *p <= '9') spec.width = spec.width * 10 + (*p++ - '0');
  for (;; ++p) {
    if (*p == 'l')
      ++spec.length;
    else if (*p == 'z')
      spec.length = 1;
    else if (*p == 'h')
      spec.length = -1;
    else
      break;
  }
  return p;
}

void put_conversion(Output& out, char conversion, const Spec& spec, va_list& args) {
  switch (conversion) {
    case 'd':
    case 'i': {
      int64_t v = signed_argument(args, spec.length);
      put_number(out, spec, v < 0 ? uint64_t(0) - uint64_t(v) : uint64_t(v), v < 0, 10, false);
      break;
    }
    case 'u': put_number(out, spec, unsigned_argument(args, spec.length), false, 10, false); break;
    case 'x': put_number(out, spec, unsigned_argument(args, spec.length), false, 16, false); break;
    case 'X': put_number(out, spec, unsigned_argument(args, spec.length), false, 16, true); break;
    case 'p': {
      out.put('0');
      out.put('x');
      Spec hex = spec;
      hex.zero = true;
      hex.width = 16;
      put_number(out, hex, uint64_t(uintptr_t(va_arg(args, void*))), false, 16, false);
      break;
    }
    case 'c': {
      char c = char(va_arg(args, int));
      put_padded(out, spec, &c, 1, false);
      break;
    }
    case 's': {
      const char* s = va_arg(args, const char*);
      if (!s) s = "(null)";
      int n = 0;
      while (s[n]) ++n;
      put_padded(out, spec, s, n, false);
      break;
    }
    case '%': out.put('%'); break;
    default:
      out.put('%');
      if (conversion) out.put(conversion);
  }
}
}  // namespace

size_t format_to(char* buffer, size_t size, const char* fmt, va_list args) {
  Output out(buffer, size);
  va_list local;
  va_copy(local, args);
  for (const char* p = fmt; *p; ++p) {
    if (*p != '%') {
      out.put(*p);
      continue;
    }
    Spec spec;
    p = parse_spec(p + 1, spec);
    put_conversion(out, *p, spec, local);
    if (!*p) break;
  }
  va_end(local);
  return out.finish();
}

size_t format_to(char* buffer, size_t size, const char* fmt, ...) {
  va_list args;
  va_start(args, fmt);
  size_t n = format_to(buffer, size, fmt, args);
  va_end(args);
  return n;
}
