#include "control/vcpu_affinity.h"

#include <gtest/gtest.h>

#include <vector>

namespace {
using control::AffinityChange;

CpuMask bits(uint64_t b) { return CpuMask::from_bits(b); }

TEST(VcpuAffinity, RequestChecksInXensOrder) {
  using control::check_vcpu_affinity_request;
  EXPECT_EQ(check_vcpu_affinity_request(4, 4, false, 0, true, true), -XEN_EINVAL) << "beyond max_vcpus first";
  EXPECT_EQ(check_vcpu_affinity_request(1, 4, false, 0, true, true), -XEN_ESRCH) << "a vCPU not made";
  EXPECT_EQ(check_vcpu_affinity_request(1, 4, true, 0, false, false), -XEN_EINVAL) << "flags 0";
  EXPECT_EQ(check_vcpu_affinity_request(1, 4, true, XEN_VCPUAFFINITY_HARD, true, false), -XEN_EINVAL);
  EXPECT_EQ(check_vcpu_affinity_request(1, 4, true, XEN_VCPUAFFINITY_SOFT, false, true), -XEN_EINVAL);
  EXPECT_EQ(check_vcpu_affinity_request(1, 4, true, XEN_VCPUAFFINITY_HARD, false, true), 0)
      << "the soft handle only matters with the soft flag";
  EXPECT_EQ(check_vcpu_affinity_request(1, 4, true, XEN_VCPUAFFINITY_FORCE, true, true), 0)
      << "neither hard nor soft, but not 0: accepted";
  EXPECT_EQ(check_vcpu_affinity_request(1, 4, true, 0x80, true, true), 0);
}

TEST(VcpuAffinity, BitmapReading) {
  const uint8_t all[4] = {0xff, 0xff, 0xff, 0xff};
  EXPECT_EQ(control::bitmap_read_bytes(0, 4), 0u);
  EXPECT_EQ(control::bitmap_read_bytes(3, 4), 1u);
  EXPECT_EQ(control::bitmap_read_bytes(4096, 4), 1u) << "no more than nr_cpu_ids' bytes";
  EXPECT_EQ(control::bitmap_read_bytes(4096, 12), 2u);
  EXPECT_EQ(control::mask_from_bitmap(all, 0, 4), CpuMask()) << "no bits: the empty mask";
  EXPECT_EQ(control::mask_from_bitmap(all, 3, 4), bits(0x7)) << "bits past nr_bits are cleared";
  EXPECT_EQ(control::mask_from_bitmap(all, 32, 4), bits(0xf)) << "cut to nr_cpu_ids";
  EXPECT_EQ(control::mask_from_bitmap(all, 32, 12), bits(0xfff));
  const uint8_t high[2] = {0x10, 0x01};
  EXPECT_EQ(control::mask_from_bitmap(high, 16, 4), CpuMask()) << "CPU 4 and 8 do not exist";
  EXPECT_EQ(control::mask_from_bitmap(high, 16, 9), bits(0x110));
}

TEST(VcpuAffinity, BitmapWriting) {
  EXPECT_EQ(control::bitmap_write_bytes(0), 0u);
  EXPECT_EQ(control::bitmap_write_bytes(1), 1u);
  EXPECT_EQ(control::bitmap_write_bytes(128), 16u);
  std::vector<uint8_t> out(16, 0xaa);
  control::bitmap_from_mask(bits(0xffff), 4, out.data(), uint32_t(out.size()));
  EXPECT_EQ(out[0], 0x0f) << "only nr_cpu_ids bits";
  for (size_t i = 1; i < out.size(); ++i) EXPECT_EQ(out[i], 0) << i;
  control::bitmap_from_mask(bits(0x305), 12, out.data(), 2);
  EXPECT_EQ(out[0], 0x05);
  EXPECT_EQ(out[1], 0x03);
}

TEST(VcpuAffinity, HardMaskNeedsAnOnlineCpu) {
  const CpuMask online = CpuMask::first(4), all = CpuMask::first(4);
  AffinityChange c = control::set_vcpu_affinity(all, all, XEN_VCPUAFFINITY_HARD, CpuMask(), CpuMask(), online);
  EXPECT_EQ(c.error, -XEN_EINVAL);
  EXPECT_EQ(c.hard, all) << "unchanged";
  c = control::set_vcpu_affinity(all, all, XEN_VCPUAFFINITY_HARD, bits(0x30), CpuMask(), bits(0xb));
  EXPECT_EQ(c.error, -XEN_EINVAL) << "only CPUs that are not online";
  c = control::set_vcpu_affinity(all, all, XEN_VCPUAFFINITY_HARD, bits(0x6), CpuMask(), bits(0xb));
  EXPECT_EQ(c.error, 0);
  EXPECT_EQ(c.hard, bits(0x6)) << "kept as given, offline CPU 2 included";
  EXPECT_EQ(c.hard_out, bits(0x2)) << "answered: hard & online";
  EXPECT_EQ(c.soft, all);
}

TEST(VcpuAffinity, SoftMaskIsKeptAndAnsweredWithinHard) {
  const CpuMask online = CpuMask::first(4), all = CpuMask::first(4);
  AffinityChange c =
      control::set_vcpu_affinity(all, all, XEN_VCPUAFFINITY_HARD | XEN_VCPUAFFINITY_SOFT, bits(0x3), bits(0x6), online);
  EXPECT_EQ(c.error, 0);
  EXPECT_EQ(c.hard, bits(0x3));
  EXPECT_EQ(c.soft, bits(0x6));
  EXPECT_EQ(c.hard_out, bits(0x3));
  EXPECT_EQ(c.soft_out, bits(0x2)) << "soft & online & the new hard";
  c = control::set_vcpu_affinity(bits(0x1), all, XEN_VCPUAFFINITY_SOFT, CpuMask(), CpuMask(), online);
  EXPECT_EQ(c.error, 0) << "an empty soft mask is no error";
  EXPECT_EQ(c.soft, CpuMask());
  EXPECT_EQ(c.soft_out, CpuMask());
  EXPECT_EQ(c.hard, bits(0x1));
  c = control::set_vcpu_affinity(bits(0x1), all, XEN_VCPUAFFINITY_FORCE, bits(0x2), bits(0x2), online);
  EXPECT_EQ(c.error, 0);
  EXPECT_EQ(c.hard, bits(0x1)) << "neither flag: nothing changes";
  EXPECT_EQ(c.soft, all);
}
}  // namespace
