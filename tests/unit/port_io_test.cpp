#include "pv/port_io.h"
#include <gtest/gtest.h>
#include <vector>

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

TEST(PortIo, DecodesStringForms) {
  const uint8_t outsb[] = {0x6e};
  port_io::Access a = port_io::decode(outsb, sizeof(outsb));
  EXPECT_TRUE(a.valid && a.is_out && a.string && a.port_in_dx && !a.rep);
  EXPECT_EQ(a.width, 1u);
  EXPECT_EQ(a.length, 1u);

  const uint8_t rep_outsb[] = {0xf3, 0x6e};
  a = port_io::decode(rep_outsb, sizeof(rep_outsb));
  EXPECT_TRUE(a.valid && a.is_out && a.string && a.rep);
  EXPECT_EQ(a.length, 2u);

  const uint8_t rep_insw[] = {0x66, 0xf3, 0x6d};
  a = port_io::decode(rep_insw, sizeof(rep_insw));
  EXPECT_TRUE(a.valid && !a.is_out && a.string && a.rep);
  EXPECT_EQ(a.width, 2u);
  EXPECT_EQ(a.length, 3u);

  const uint8_t rep_insd_other_order[] = {0xf3, 0x66, 0x6d};
  a = port_io::decode(rep_insd_other_order, sizeof(rep_insd_other_order));
  EXPECT_TRUE(a.valid && a.rep && a.width == 2u);

  const uint8_t outsd[] = {0x6f};
  a = port_io::decode(outsd, sizeof(outsd));
  EXPECT_TRUE(a.valid && a.is_out && a.string && a.width == 4u);
}

TEST(PortIo, RefusesEverythingElse) {
  const uint8_t rep_out[] = {0xf3, 0xee};       // rep on a non-string in/out
  const uint8_t seg_outsb[] = {0x2e, 0x6e};     // segment override
  const uint8_t addr32_outsb[] = {0x67, 0x6e};  // 32-bit addresses
  const uint8_t double_rep[] = {0xf3, 0xf3, 0x6e};
  const uint8_t repne_outsb[] = {0xf2, 0x6e};
  for (const auto& bytes :
       {std::vector<uint8_t>(rep_out, rep_out + 2), std::vector<uint8_t>(seg_outsb, seg_outsb + 2),
        std::vector<uint8_t>(addr32_outsb, addr32_outsb + 2), std::vector<uint8_t>(double_rep, double_rep + 3),
        std::vector<uint8_t>(repne_outsb, repne_outsb + 2)})
    EXPECT_FALSE(port_io::decode(bytes.data(), bytes.size()).valid) << int(bytes[0]);
  const uint8_t cli[] = {0xfa};
  const uint8_t truncated[] = {0xe6};  // immediate missing
  const uint8_t prefix_only[] = {0x66};
  EXPECT_FALSE(port_io::decode(cli, sizeof(cli)).valid);
  EXPECT_FALSE(port_io::decode(truncated, sizeof(truncated)).valid);
  EXPECT_FALSE(port_io::decode(prefix_only, sizeof(prefix_only)).valid);
  EXPECT_FALSE(port_io::decode(nullptr, 0).valid);
}

TEST(PortIo, HypervisorPortsAreNotTheGuests) {
  for (uint16_t port : {0x3f8, 0x3fd, 0x20, 0xa1, 0x40, 0x43, 0x61, 0x70, 0xf4})
    EXPECT_TRUE(port_io::hypervisor_port(port)) << port;
  for (uint16_t port : {0x2f8, 0x2fd, 0x80, 0xcf8}) EXPECT_FALSE(port_io::hypervisor_port(port)) << port;
}

// A wide access is checked over all its ports, not only the first (Xen's admin_io_okay):
// outl at 0x3f5 reaches COM1's 0x3f8, at 0xf1 the exit device's 0xf4, at 0x1f the PIC's 0x20.
TEST(PortIo, RangeIsCheckedOverEveryPort) {
  EXPECT_FALSE(port_io::range_permitted(0x3f5, 4));
  EXPECT_FALSE(port_io::range_permitted(0x3f7, 2));
  EXPECT_FALSE(port_io::range_permitted(0xf1, 4));
  EXPECT_FALSE(port_io::range_permitted(0x1f, 4));
  EXPECT_FALSE(port_io::range_permitted(0x1f, 2));
  EXPECT_FALSE(port_io::range_permitted(0x3f, 2)) << "0x40 is the PIT's";
  EXPECT_TRUE(port_io::range_permitted(0x3f4, 4));
  EXPECT_TRUE(port_io::range_permitted(0xf0, 4));
  EXPECT_TRUE(port_io::range_permitted(0x1c, 4));
  EXPECT_TRUE(port_io::range_permitted(0x2f8, 4));
  EXPECT_TRUE(port_io::range_permitted(0x22, 2));
  EXPECT_FALSE(port_io::range_permitted(0x3f8, 1));
}

TEST(PortIo, RangeDoesNotWrapPastTheLastPort) {
  EXPECT_TRUE(port_io::range_permitted(0xffff, 1));
  EXPECT_TRUE(port_io::range_permitted(0xfffc, 4));
  EXPECT_FALSE(port_io::range_permitted(0xfffd, 4)) << "0xfffd..0x10000: there is no port 0x10000";
  EXPECT_FALSE(port_io::range_permitted(0xffff, 2));
  EXPECT_FALSE(port_io::range_permitted(0x10000, 1));
  EXPECT_FALSE(port_io::range_permitted(0xffffffff, 4));
  EXPECT_FALSE(port_io::range_permitted(0x100, 0));
}

namespace {
struct Piece {
  uint32_t port;
  unsigned width;
  bool permitted;
  bool operator==(const Piece&) const = default;
};
std::vector<Piece> pieces(bool privileged, uint32_t port, unsigned width) {
  port_io::PortPlan plan = port_io::plan_access(privileged, port, width);
  std::vector<Piece> out;
  unsigned total = 0;
  for (unsigned i = 0; i < plan.count; ++i) {
    out.push_back({plan.pieces[i].port, plan.pieces[i].width, plan.pieces[i].permitted});
    total += plan.pieces[i].width;
  }
  EXPECT_EQ(total, width) << "the pieces cover the access exactly";
  return out;
}
}  // namespace

// As Xen's guest_io_read/guest_io_write: a permitted range is one access; otherwise each
// permitted port on its own (an even port and the next together), each denied one skipped.
TEST(PortIo, PlanSplitsAroundDeniedPorts) {
  EXPECT_EQ(pieces(true, 0x2f8, 4), (std::vector<Piece>{{0x2f8, 4, true}}));
  EXPECT_EQ(pieces(true, 0x3f5, 4), (std::vector<Piece>{{0x3f5, 1, true}, {0x3f6, 2, true}, {0x3f8, 1, false}}));
  EXPECT_EQ(pieces(true, 0xf1, 4), (std::vector<Piece>{{0xf1, 1, true}, {0xf2, 2, true}, {0xf4, 1, false}}));
  EXPECT_EQ(pieces(true, 0x1f, 4),
            (std::vector<Piece>{{0x1f, 1, true}, {0x20, 1, false}, {0x21, 1, false}, {0x22, 1, true}}));
  EXPECT_EQ(pieces(true, 0x3f7, 2), (std::vector<Piece>{{0x3f7, 1, true}, {0x3f8, 1, false}}));
  EXPECT_EQ(pieces(true, 0x3f8, 1), (std::vector<Piece>{{0x3f8, 1, false}}));
  EXPECT_EQ(pieces(true, 0xfffd, 4), (std::vector<Piece>{{0xfffd, 1, true}, {0xfffe, 2, true}, {0x10000, 1, false}}));
}

TEST(PortIo, UnprivilegedDomainsAreDeniedEveryPort) {
  EXPECT_EQ(pieces(false, 0x2f8, 4), (std::vector<Piece>{{0x2f8, 4, false}}));
  EXPECT_EQ(pieces(false, 0x80, 1), (std::vector<Piece>{{0x80, 1, false}}));
}
