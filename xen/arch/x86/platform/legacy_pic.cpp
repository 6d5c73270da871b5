#include "arch/x86/platform/legacy_pic.h"
#include "arch/x86/cpu/io_port.h"

namespace legacy_pic {
void disable() {
  constexpr uint16_t master_command = 0x20, master_data = 0x21, slave_command = 0xa0, slave_data = 0xa1;
  io::out8(master_command, 0x11);  // ICW1: initialise, expect ICW4
  io::out8(slave_command, 0x11);
  io::out8(master_data, 0x20);  // ICW2: vectors 0x20.. and 0x28.., clear of the exceptions
  io::out8(slave_data, 0x28);
  io::out8(master_data, 0x04);  // ICW3: slave on IRQ 2
  io::out8(slave_data, 0x02);
  io::out8(master_data, 0x01);  // ICW4: 8086 mode
  io::out8(slave_data, 0x01);
  io::out8(master_data, 0xff);  // mask everything
  io::out8(slave_data, 0xff);
}
}  // namespace legacy_pic
