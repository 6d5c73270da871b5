#include "format.h"

#include <stdint.h>

namespace lib {
namespace {

// Appends to a bounded buffer while counting what would have been written.
class Sink {
 public:
  Sink(char* out, size_t capacity) : out_(out), capacity_(capacity) {}
  void put(char c) {
    if (length_ + 1 < capacity_) out_[length_] = c;
    ++length_;
  }
  void repeat(char c, int count) {
    for (int i = 0; i < count; ++i) put(c);
  }
  size_t finish() {
    if (capacity_ > 0) out_[length_ < capacity_ ? length_ : capacity_ - 1] = '\0';
    return length_;
  }

 private:
  char* out_;
  size_t capacity_;
  size_t length_ = 0;
};

struct Spec {
  bool zero_pad = false;
  bool left = false;
  int width = 0;
  int longs = 0;  // 0: int, 1: long, 2: long long / size_t
};

void emit_padded(Sink& sink, const Spec& spec, const char* text, int length, bool numeric) {
  int pad = spec.width > length ? spec.width - length : 0;
  if (!spec.left) sink.repeat(spec.zero_pad && numeric ? '0' : ' ', pad);
  for (int i = 0; i < length; ++i) sink.put(text[i]);
  if (spec.left) sink.repeat(' ', pad);
}

void emit_number(Sink& sink, const Spec& spec, uint64_t value, unsigned base, bool upper,
                 bool negative) {
  const char* digits = upper ? "0123456789ABCDEF" : "0123456789abcdef";
  char buffer[24];
  int length = 0;
  do {
    buffer[sizeof(buffer) - 1 - length++] = digits[value % base];
    value /= base;
  } while (value != 0);
  if (negative) {
    // The sign goes before zero padding: "-0042", not "00-42".
    sink.put('-');
    Spec rest = spec;
    rest.width = spec.width > 0 ? spec.width - 1 : 0;
    emit_padded(sink, rest, buffer + sizeof(buffer) - length, length, true);
    return;
  }
  emit_padded(sink, spec, buffer + sizeof(buffer) - length, length, true);
}

uint64_t take_unsigned(va_list& args, int longs) {
  if (longs == 0) return va_arg(args, unsigned int);
  if (longs == 1) return va_arg(args, unsigned long);
  return va_arg(args, unsigned long long);
}

int64_t take_signed(va_list& args, int longs) {
  if (longs == 0) return va_arg(args, int);
  if (longs == 1) return va_arg(args, long);
  return va_arg(args, long long);
}

const char* parse_spec(const char* p, Spec& spec) {
  for (;; ++p) {
    if (*p == '0') spec.zero_pad = true;
    else if (*p == '-') spec.left = true;
    else break;
  }
  while (*p >= '0' && *p <= '9') spec.width = spec.width * 10 + (*p++ - '0');
  while (*p == 'l' || *p == 'z') {
    spec.longs += (*p == 'z') ? 2 : 1;
    ++p;
  }
  if (spec.longs > 2) spec.longs = 2;
  return p;
}

void emit_conversion(Sink& sink, char conversion, const Spec& spec, va_list& args) {
  switch (conversion) {
    case 'd':
    case 'i': {
      int64_t value = take_signed(args, spec.longs);
      uint64_t magnitude = value < 0 ? 0 - static_cast<uint64_t>(value) : value;
      emit_number(sink, spec, magnitude, 10, false, value < 0);
      break;
    }
    case 'u': emit_number(sink, spec, take_unsigned(args, spec.longs), 10, false, false); break;
    case 'x': emit_number(sink, spec, take_unsigned(args, spec.longs), 16, false, false); break;
    case 'X': emit_number(sink, spec, take_unsigned(args, spec.longs), 16, true, false); break;
    case 'p': {
      sink.put('0');
      sink.put('x');
      emit_number(sink, spec, reinterpret_cast<uintptr_t>(va_arg(args, void*)), 16, false,
                  false);
      break;
    }
    case 's': {
      const char* text = va_arg(args, const char*);
      if (text == nullptr) text = "(null)";
      int length = 0;
      while (text[length] != '\0') ++length;
      emit_padded(sink, spec, text, length, false);
      break;
    }
    case 'c': {
      char c = static_cast<char>(va_arg(args, int));
      emit_padded(sink, spec, &c, 1, false);
      break;
    }
    case '%': sink.put('%'); break;
    default:
      // Unknown conversions are shown rather than silently dropped.
      sink.put('%');
      sink.put(conversion);
      break;
  }
}

}  // namespace

size_t vformat(char* out, size_t capacity, const char* fmt, va_list args) {
  Sink sink(out, capacity);
  va_list local;
  va_copy(local, args);
  for (const char* p = fmt; *p != '\0'; ++p) {
    if (*p != '%') {
      sink.put(*p);
      continue;
    }
    Spec spec;
    p = parse_spec(p + 1, spec);
    if (*p == '\0') break;
    emit_conversion(sink, *p, spec, local);
  }
  va_end(local);
  return sink.finish();
}

size_t format(char* out, size_t capacity, const char* fmt, ...) {
  va_list args;
  va_start(args, fmt);
  size_t length = vformat(out, capacity, fmt, args);
  va_end(args);
  return length;
}

}  // namespace lib
