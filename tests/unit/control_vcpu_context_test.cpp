#include "control/vcpu_context.h"

#include <gtest/gtest.h>

namespace {
using control::check_vcpu_context;
using control::VcpuTablesNow;

constexpr uint64_t kNonCanonical = 0x0000800000000000ull;

// The context a builder gives a new 64-bit PV kernel.
vcpu_guest_context first_context() {
  vcpu_guest_context c{};
  c.flags = VGCF_in_kernel | VGCF_online;
  c.user_regs.rip = 0xffffffff80001000ull;
  c.user_regs.rsp = 0xffffffff80400000ull;
  c.user_regs.cs = FLAT_KERNEL_CS;
  c.user_regs.ss = FLAT_KERNEL_SS;
  c.kernel_ss = FLAT_KERNEL_SS;
  c.kernel_sp = 0xffffffff80400000ull;
  c.ctrlreg[3] = 0x1234ull << 12;
  return c;
}

long check(const vcpu_guest_context& c) { return check_vcpu_context(c, 0, VcpuTablesNow{}); }

TEST(VcpuContext, CanonicalAddresses) {
  EXPECT_TRUE(control::canonical(0));
  EXPECT_TRUE(control::canonical(0x00007fffffffffffull));
  EXPECT_TRUE(control::canonical(0xffff800000000000ull));
  EXPECT_FALSE(control::canonical(kNonCanonical));
  EXPECT_FALSE(control::canonical(0xffff7fffffffffffull));
}

TEST(VcpuContext, AGoodFirstContext) { EXPECT_EQ(check(first_context()), 0); }

TEST(VcpuContext, EveryAddressMustBeCanonical) {
  uint64_t vcpu_guest_context::*fields[] = {
      &vcpu_guest_context::kernel_sp,           &vcpu_guest_context::fs_base,
      &vcpu_guest_context::gs_base_kernel,      &vcpu_guest_context::gs_base_user,
      &vcpu_guest_context::event_callback_eip,  &vcpu_guest_context::failsafe_callback_eip,
      &vcpu_guest_context::syscall_callback_eip};
  for (auto field : fields) {
    vcpu_guest_context c = first_context();
    c.*field = kNonCanonical;
    EXPECT_EQ(check(c), -XEN_EINVAL);
  }
  vcpu_guest_context c = first_context();
  c.user_regs.rip = kNonCanonical;
  EXPECT_EQ(check(c), -XEN_EINVAL);
  c = first_context();
  c.user_regs.rsp = kNonCanonical;
  EXPECT_EQ(check(c), -XEN_EINVAL);
  c = first_context();
  c.trap_ctxt[200].address = kNonCanonical;
  EXPECT_EQ(check(c), -XEN_EINVAL) << "every trap handler";
}

TEST(VcpuContext, LdtAndGdt) {
  vcpu_guest_context c = first_context();
  c.ldt_base = 0xffff830000000000ull;  // inside the hypervisor's range
  EXPECT_EQ(check(c), -XEN_EINVAL);
  c = first_context();
  c.ldt_base = 0x1001;
  EXPECT_EQ(check(c), -XEN_EINVAL) << "not page aligned";
  c = first_context();
  c.ldt_ents = 8193;
  EXPECT_EQ(check(c), -XEN_EINVAL);
  c = first_context();
  c.gdt_ents = 16 * 512 + 1;
  EXPECT_EQ(check(c), -XEN_EINVAL) << "more than 16 GDT frames";
  c = first_context();
  c.gdt_ents = 10;
  EXPECT_EQ(check(c), 0) << "a GDT's frames are checked when they are taken";
  c.ldt_ents = 16;
  c.ldt_base = 0x7000;
  EXPECT_EQ(check(c), 0) << "an LDT within the rules";
}

TEST(VcpuContext, AnInitialisedVcpuKeepsItsDescriptorTables) {
  const uint64_t frames[2] = {0x50, 0x51};
  VcpuTablesNow now{true, 0x1234, 0, 600, frames, 0x7000, 16};
  vcpu_guest_context c = first_context();
  c.gdt_ents = 600;
  c.gdt_frames[0] = 0x50;
  c.gdt_frames[1] = 0x51;
  c.ldt_ents = 16;
  c.ldt_base = 0x7000;
  EXPECT_EQ(check_vcpu_context(c, 0, now), 0);
  c.gdt_frames[1] = 0x52;
  EXPECT_EQ(check_vcpu_context(c, 0, now), -XEN_EOPNOTSUPP) << "another GDT frame";
  c.gdt_frames[1] = 0x51;
  c.gdt_ents = 500;
  EXPECT_EQ(check_vcpu_context(c, 0, now), -XEN_EOPNOTSUPP) << "another GDT size";
  c.gdt_ents = 600;
  c.ldt_base = 0x8000;
  EXPECT_EQ(check_vcpu_context(c, 0, now), -XEN_EOPNOTSUPP) << "another LDT";
}

TEST(VcpuContext, VmAssistMask) {
  vcpu_guest_context c = first_context();
  c.vm_assist = 1UL << VMASST_TYPE_m2p_strict | 1UL << VMASST_TYPE_writable_pagetables;
  EXPECT_EQ(check(c), 0);
  c.vm_assist = 1UL << 20;
  EXPECT_EQ(check(c), -XEN_EINVAL);
  EXPECT_EQ(check_vcpu_context(c, 1, VcpuTablesNow{}), 0) << "only vCPU 0's vm_assist counts";
}

TEST(VcpuContext, UserModeNeedsAUserTable) {
  vcpu_guest_context c = first_context();
  c.flags = VGCF_online;
  EXPECT_EQ(check(c), -XEN_EINVAL);
  c.ctrlreg[1] = 0x99ull << 12;
  EXPECT_EQ(check(c), 0);
}

TEST(VcpuContext, AnInitialisedVcpuKeepsItsTables) {
  VcpuTablesNow now{true, 0x1234, 0};
  vcpu_guest_context c = first_context();
  EXPECT_EQ(check_vcpu_context(c, 0, now), 0);
  c.ctrlreg[3] = 0x4321ull << 12;
  EXPECT_EQ(check_vcpu_context(c, 0, now), -XEN_EOPNOTSUPP);
  c = first_context();
  c.ctrlreg[1] = 0x99ull << 12;
  EXPECT_EQ(check_vcpu_context(c, 0, now), -XEN_EOPNOTSUPP) << "a user table it did not have";
}

TEST(VcpuContext, SelectorsGetRpl3) {
  vcpu_guest_context c = first_context();
  c.user_regs.cs = 0x10;
  c.user_regs.ss = 0x18;
  c.kernel_ss = 0;
  c.trap_ctxt[3].cs = 0x11;
  control::fix_guest_selectors(c);
  EXPECT_EQ(c.user_regs.cs, 0x13);
  EXPECT_EQ(c.user_regs.ss, 0x1b);
  EXPECT_EQ(c.kernel_ss, 3u);
  EXPECT_EQ(c.trap_ctxt[3].cs, 0x13);
}

TEST(VcpuContext, AddressSize) {
  EXPECT_EQ(control::check_address_size(64), 0);
  EXPECT_EQ(control::check_address_size(32), -XEN_EOPNOTSUPP);
  EXPECT_EQ(control::check_address_size(16), -XEN_EINVAL);
  EXPECT_EQ(control::check_address_size(0), -XEN_EINVAL);
}
}  // namespace
