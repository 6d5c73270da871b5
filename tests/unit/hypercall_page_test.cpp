#include "pv/rules/hypercall_page.h"
#include <gtest/gtest.h>
#include <xen/xen.h>
#include <vector>

TEST(HypercallPage, NormalStubSavesRcxR11AndSyscalls) {
  std::vector<uint8_t> page(4096);
  hypercall_page::fill(page.data());
  const uint8_t* stub = page.data() + __HYPERVISOR_console_io * 32;
  const uint8_t expected[] = {0x51, 0x41, 0x53, 0xb8, __HYPERVISOR_console_io, 0, 0, 0, 0x0f, 0x05,
                              0x41, 0x5b, 0x59, 0xc3};
  EXPECT_EQ(std::vector<uint8_t>(stub, stub + sizeof(expected)),
            std::vector<uint8_t>(expected, expected + sizeof(expected)));
  EXPECT_EQ(stub[sizeof(expected)], 0xcc);  // padding traps
}

TEST(HypercallPage, IretStubPushesRaxAndNeverReturns) {
  std::vector<uint8_t> page(4096);
  hypercall_page::fill(page.data());
  const uint8_t* stub = page.data() + __HYPERVISOR_iret * 32;
  const uint8_t expected[] = {0x51, 0x41, 0x53, 0x50, 0xb8, __HYPERVISOR_iret, 0, 0, 0, 0x0f, 0x05};
  EXPECT_EQ(std::vector<uint8_t>(stub, stub + sizeof(expected)),
            std::vector<uint8_t>(expected, expected + sizeof(expected)));
  EXPECT_EQ(stub[sizeof(expected)], 0xcc);
}

TEST(HypercallPage, EveryStubLoadsItsOwnNumber) {
  std::vector<uint8_t> page(4096);
  hypercall_page::fill(page.data());
  for (unsigned n = 0; n < 128; ++n) {
    const uint8_t* stub = page.data() + n * 32;
    unsigned offset = n == __HYPERVISOR_iret ? 5 : 4;
    uint32_t number = stub[offset] | stub[offset + 1] << 8 | stub[offset + 2] << 16 | uint32_t(stub[offset + 3]) << 24;
    EXPECT_EQ(number, n);
  }
}
