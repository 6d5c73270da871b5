#include "pv/port_io.h"
#include <gtest/gtest.h>

TEST(PortIo, DecodesEveryInOutForm) {
  const uint8_t out_dx_al[] = {0xee};
  port_io::Access a = port_io::decode(out_dx_al, sizeof(out_dx_al));
  EXPECT_TRUE(a.valid && a.is_out && a.port_in_dx);
  EXPECT_EQ(a.width, 1u);
  EXPECT_EQ(a.length, 1u);

  const uint8_t in_al_imm[] = {0xe4, 0x71};
  a = port_io::decode(in_al_imm, sizeof(in_al_imm));
  EXPECT_TRUE(a.valid && !a.is_out && !a.port_in_dx);
  EXPECT_EQ(a.immediate_port, 0x71);
  EXPECT_EQ(a.length, 2u);

  const uint8_t in_ax_dx[] = {0x66, 0xed};
  a = port_io::decode(in_ax_dx, sizeof(in_ax_dx));
  EXPECT_TRUE(a.valid && !a.is_out);
  EXPECT_EQ(a.width, 2u);
  EXPECT_EQ(a.length, 2u);

  const uint8_t out_imm_eax[] = {0xe7, 0x80};
  a = port_io::decode(out_imm_eax, sizeof(out_imm_eax));
  EXPECT_TRUE(a.valid && a.is_out);
  EXPECT_EQ(a.width, 4u);
}

TEST(PortIo, RefusesEverythingElse) {
  const uint8_t outsb[] = {0x6e};         // string form
  const uint8_t cli[] = {0xfa};
  const uint8_t truncated[] = {0xe6};     // immediate missing
  const uint8_t prefix_only[] = {0x66};
  EXPECT_FALSE(port_io::decode(outsb, sizeof(outsb)).valid);
  EXPECT_FALSE(port_io::decode(cli, sizeof(cli)).valid);
  EXPECT_FALSE(port_io::decode(truncated, sizeof(truncated)).valid);
  EXPECT_FALSE(port_io::decode(prefix_only, sizeof(prefix_only)).valid);
  EXPECT_FALSE(port_io::decode(nullptr, 0).valid);
}

TEST(PortIo, HypervisorPortsAreNotTheGuests) {
  for (uint16_t port : {0x3f8, 0x3fd, 0x20, 0xa1, 0x40, 0x43, 0x61, 0x70, 0xf4})
    EXPECT_TRUE(port_io::hypervisor_port(port)) << port;
  for (uint16_t port : {0x2f8, 0x2fd, 0x80, 0xcf8})
    EXPECT_FALSE(port_io::hypervisor_port(port)) << port;
}
