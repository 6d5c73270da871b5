#include "time/wallclock.h"
#include "arch/x86/cpu/io_port.h"
#include "time/calendar.h"

namespace wallclock {
namespace {
constexpr uint16_t cmos_index = 0x70, cmos_data = 0x71;
uint8_t read_register(uint8_t reg) {
  io::out8(cmos_index, reg);
  return io::in8(cmos_data);
}
bool update_in_progress() { return read_register(0x0a) & 0x80; }
}  // namespace

uint64_t seconds_since_epoch() {
  while (update_in_progress()) {
  }
  unsigned raw[6] = {read_register(0x09), read_register(0x08), read_register(0x07),
                     read_register(0x04), read_register(0x02), read_register(0x00)};
  uint8_t status_b = read_register(0x0b);
  bool binary = status_b & 0x04, twenty_four_hour = status_b & 0x02;
  bool pm = !twenty_four_hour && (raw[3] & 0x80);
  raw[3] &= 0x7f;
  if (!binary)
    for (unsigned& v : raw) v = from_bcd(v);
  if (!twenty_four_hour) raw[3] = (raw[3] % 12) + (pm ? 12 : 0);
  CalendarTime t{2000 + raw[0], raw[1], raw[2], raw[3], raw[4], raw[5]};
  return ::seconds_since_epoch(t);
}
}  // namespace wallclock
