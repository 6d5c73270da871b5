// Calendar arithmetic (pure): a UTC date and time to seconds since 1970-01-01.
#pragma once
#include <stdint.h>

struct CalendarTime {
  unsigned year, month, day, hour, minute, second;  // month and day from 1
};

uint64_t seconds_since_epoch(const CalendarTime& t);
// Decodes a CMOS register value in BCD when the RTC is in BCD mode.
constexpr unsigned from_bcd(unsigned v) { return (v & 0xf) + (v >> 4) * 10; }
