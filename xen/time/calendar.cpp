#include "time/calendar.h"

namespace {
// Days from 1970-01-01 to year-month-day, by counting days before March 1 of a shifted year
// (so the leap day is the last day of the shifted year).
int64_t days_from_civil(int64_t y, unsigned m, unsigned d) {
  y -= m <= 2;
  int64_t era = (y >= 0 ? y : y - 399) / 400;
  unsigned year_of_era = unsigned(y - era * 400);
  unsigned day_of_year = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  unsigned day_of_era = year_of_era * 365 + year_of_era / 4 - year_of_era / 100 + day_of_year;
  return era * 146097 + int64_t(day_of_era) - 719468;
}
}  // namespace

uint64_t seconds_since_epoch(const CalendarTime& t) {
  int64_t days = days_from_civil(t.year, t.month, t.day);
  if (days < 0) return 0;
  return uint64_t(days) * 86400 + t.hour * 3600 + t.minute * 60 + t.second;
}
