#include "time/pit.h"
#include "arch/x86/cpu/io_port.h"

namespace pit {
namespace {
constexpr uint16_t channel2 = 0x42, command = 0x43, speaker_control = 0x61;
}

void wait_ticks(uint16_t ticks) {
  // Gate channel 2 on, speaker off; mode 0 (interrupt on terminal count) counts down once.
  io::out8(speaker_control, (io::in8(speaker_control) & ~0x02) | 0x01);
  io::out8(command, 0xb0);  // channel 2, lobyte/hibyte, mode 0
  io::out8(channel2, uint8_t(ticks));
  io::out8(channel2, uint8_t(ticks >> 8));
  while (!(io::in8(speaker_control) & 0x20)) {
  }  // OUT2 goes high at terminal count
}
}  // namespace pit
