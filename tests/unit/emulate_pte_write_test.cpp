// pte_write on real instruction bytes: what each supported form does to the entry, the
// registers and the flags, and which forms and placements are refused.
#include "emulate/pte_write.h"
#include <gtest/gtest.h>
#include <cstring>
#include <vector>
#include "emulate/arithmetic_flags.h"

namespace {
using pte_write::Status;
using pte_write::WriteResult;
namespace rf = emulate::rflags;

constexpr uint64_t kTable = 0xffff888000123000ULL;  // guest VA of a page-table page
constexpr uint64_t kEntry = kTable + 3 * 8;         // the entry the guest writes
constexpr uint64_t kOld = 0x8000000012345067ULL;    // NX | frame 0x12345 | D A U W P
constexpr uint64_t kRip = 0xffffffff81000001ULL;
constexpr uint64_t kFlags = 0x202;  // IF | reserved bit 1

class EmulatePteWrite : public ::testing::Test {
 protected:
  void SetUp() override {
    frame_.rip = kRip;
    frame_.rflags = kFlags;
    frame_.rdi = kEntry;
    frame_.cs = 0xe033;
  }
  WriteResult run(std::vector<uint8_t> bytes, uint64_t cr2 = kEntry, uint64_t old = kOld) {
    return pte_write::emulate(bytes.data(), bytes.size(), frame_, segments_, cr2, old);
  }
  Status decode_status(std::vector<uint8_t> bytes) { return pte_write::decode(bytes.data(), bytes.size()).status; }

  TrapFrame frame_{};
  pte_write::SegmentBases segments_{};
};

void expect_plain_store(const WriteResult& r, uint64_t entry, unsigned length) {
  ASSERT_EQ(r.status, Status::ok) << pte_write::to_string(r.status);
  EXPECT_TRUE(r.writes);
  EXPECT_EQ(r.new_entry, entry);
  EXPECT_EQ(r.length, length);
  EXPECT_FALSE(r.register_write.present);
  EXPECT_EQ(r.rflags, kFlags) << "mov does not touch flags";
}
}  // namespace

// ---- mov ----

TEST_F(EmulatePteWrite, Mov64FromRegister) {
  frame_.rax = 0x00000000abcde063ULL;
  expect_plain_store(run({0x48, 0x89, 0x07}), 0x00000000abcde063ULL, 3);  // mov %rax,(%rdi)
}

TEST_F(EmulatePteWrite, Mov64FromExtendedRegister) {
  frame_.r11 = 0x42067;
  frame_.r9 = kEntry;
  expect_plain_store(run({0x4d, 0x89, 0x19}), 0x42067, 3);  // mov %r11,(%r9)
}

TEST_F(EmulatePteWrite, MovImm32IsSignExtended) {
  // movq $0x80003067,(%rdi): the immediate's bit 31 fills bits 63:32.
  expect_plain_store(run({0x48, 0xc7, 0x07, 0x67, 0x30, 0x00, 0x80}), 0xffffffff80003067ULL, 7);
  // movq $0x00123067,(%rdi)
  expect_plain_store(run({0x48, 0xc7, 0x07, 0x67, 0x30, 0x12, 0x00}), 0x0000000000123067ULL, 7);
  // movq $0,(%rdi): pte_clear
  expect_plain_store(run({0x48, 0xc7, 0x07, 0x00, 0x00, 0x00, 0x00}), 0, 7);
}

TEST_F(EmulatePteWrite, Mov32ToLowHalfKeepsTheHighHalf) {
  frame_.rax = 0xdeadbeef55555025ULL;                               // only eax is stored
  expect_plain_store(run({0x89, 0x07}), 0x8000000055555025ULL, 2);  // mov %eax,(%rdi)
}

TEST_F(EmulatePteWrite, Mov32ToHighHalfKeepsTheLowHalf) {
  frame_.rax = 0x0000000000000001ULL;
  // mov %eax,0x4(%rdi), CR2 = the high half
  expect_plain_store(run({0x89, 0x47, 0x04}, kEntry + 4), 0x0000000112345067ULL, 3);
}

TEST_F(EmulatePteWrite, MovOfOneByteFromAHighByteRegister) {
  frame_.rax = 0x1111111111112211ULL;                               // ah = 0x22
  expect_plain_store(run({0x88, 0x27}), 0x8000000012345022ULL, 2);  // mov %ah,(%rdi)
}

TEST_F(EmulatePteWrite, CR2MayPointAnywhereInTheSameEntry) {
  frame_.rax = 5;
  // Hardware reports the start of the access; we compare entries, so a report inside the
  // same entry is accepted, and one in the next entry is not.
  expect_plain_store(run({0x48, 0x89, 0x07}, kEntry + 7), 5, 3);
  EXPECT_EQ(run({0x48, 0x89, 0x07}, kEntry + 8).status, Status::not_the_faulting_address);
}

// ---- xchg ----

TEST_F(EmulatePteWrite, XchgStoresTheRegisterAndReturnsTheOldEntry) {
  frame_.rax = 0;  // ptep_get_and_clear: xchg %rax,(%rdi) with rax = 0
  WriteResult r = run({0x48, 0x87, 0x07});
  ASSERT_EQ(r.status, Status::ok);
  EXPECT_TRUE(r.writes);
  EXPECT_EQ(r.new_entry, 0u);
  ASSERT_TRUE(r.register_write.present);
  EXPECT_EQ(r.register_write.gpr, emulate::Gpr::rax);
  EXPECT_EQ(r.register_write.value, kOld);
  EXPECT_EQ(r.rflags, kFlags);
  pte_write::apply(r, frame_);
  EXPECT_EQ(frame_.rax, kOld);
  EXPECT_EQ(frame_.rip, kRip + 3);
}

TEST_F(EmulatePteWrite, Xchg32WithTheHighHalfZeroExtendsTheRegister) {
  frame_.rsi = 0xffffffff00000000ULL;
  // xchg %esi,0x4(%rdi)
  WriteResult r = run({0x87, 0x77, 0x04}, kEntry + 4);
  ASSERT_EQ(r.status, Status::ok);
  EXPECT_EQ(r.new_entry, 0x0000000012345067ULL);
  ASSERT_TRUE(r.register_write.present);
  EXPECT_EQ(r.register_write.gpr, emulate::Gpr::rsi);
  EXPECT_EQ(r.register_write.value, 0x80000000ULL);
}

// ---- cmpxchg ----

TEST_F(EmulatePteWrite, LockedCmpxchgThatMatchesWrites) {
  frame_.rax = kOld;
  frame_.rsi = 0x8000000012345065ULL;                   // clear D
  WriteResult r = run({0xf0, 0x48, 0x0f, 0xb1, 0x37});  // lock cmpxchg %rsi,(%rdi)
  ASSERT_EQ(r.status, Status::ok);
  EXPECT_TRUE(r.writes);
  EXPECT_EQ(r.new_entry, 0x8000000012345065ULL);
  EXPECT_FALSE(r.register_write.present) << "rax is not written on success";
  EXPECT_EQ(r.rflags, kFlags | rf::zero | rf::parity) << "flags of rax - old = 0";
  EXPECT_EQ(r.length, 5);
  EXPECT_TRUE(pte_write::decode(std::vector<uint8_t>{0xf0, 0x48, 0x0f, 0xb1, 0x37}.data(), 5).write.locked);
}

TEST_F(EmulatePteWrite, CmpxchgWithoutLockBehavesTheSame) {
  frame_.rax = kOld;
  frame_.rsi = 0x1067;
  std::vector<uint8_t> bytes{0x48, 0x0f, 0xb1, 0x37};  // cmpxchg %rsi,(%rdi)
  EXPECT_FALSE(pte_write::decode(bytes.data(), bytes.size()).write.locked);
  WriteResult r = run(bytes);
  ASSERT_EQ(r.status, Status::ok);
  EXPECT_TRUE(r.writes);
  EXPECT_EQ(r.new_entry, 0x1067u);
  EXPECT_EQ(r.length, 4);
  EXPECT_TRUE(r.rflags & rf::zero);
}

TEST_F(EmulatePteWrite, CmpxchgThatFindsAnotherValueLoadsRaxAndClearsZF) {
  frame_.rax = kOld - 0x20;  // the guest expected the entry without A
  frame_.rsi = 0x1067;
  frame_.rflags = kFlags | rf::zero;
  WriteResult r = run({0xf0, 0x48, 0x0f, 0xb1, 0x37});
  ASSERT_EQ(r.status, Status::ok);
  EXPECT_FALSE(r.writes);
  EXPECT_EQ(r.new_entry, kOld) << "entry unchanged";
  ASSERT_TRUE(r.register_write.present);
  EXPECT_EQ(r.register_write.gpr, emulate::Gpr::rax);
  EXPECT_EQ(r.register_write.value, kOld);
  // rax - old = -0x20: borrow (CF), negative (SF), low byte 0xe0 has three ones (no PF),
  // no signed overflow, no borrow out of bit 3.
  EXPECT_EQ(r.rflags, kFlags | rf::carry | rf::sign);
  pte_write::apply(r, frame_);
  EXPECT_EQ(frame_.rax, kOld);
  EXPECT_EQ(frame_.rip, kRip + 5);
  EXPECT_FALSE(frame_.rflags & rf::zero);
}

TEST_F(EmulatePteWrite, Cmpxchg32FailureZeroExtendsEax) {
  frame_.rax = 0xffffffff00000000ULL;
  frame_.rsi = 0x1067;
  WriteResult r = run({0xf0, 0x0f, 0xb1, 0x37});  // lock cmpxchg %esi,(%rdi)
  ASSERT_EQ(r.status, Status::ok);
  EXPECT_FALSE(r.writes);
  EXPECT_EQ(r.register_write.value, 0x12345067ULL);
}

// ---- and / or / xor ----

TEST_F(EmulatePteWrite, LockedOrWithARegister) {
  frame_.rsi = 0x2;
  frame_.rflags = kFlags | rf::carry | rf::overflow;
  WriteResult r = run({0xf0, 0x48, 0x09, 0x37}, kEntry, 0x8000000000000001ULL);  // lock or %rsi,(%rdi)
  ASSERT_EQ(r.status, Status::ok);
  EXPECT_EQ(r.new_entry, 0x8000000000000003ULL);
  // CF and OF cleared; result negative (SF); low byte 0x03 has two ones (PF); not zero.
  EXPECT_EQ(r.rflags, kFlags | rf::sign | rf::parity);
}

TEST_F(EmulatePteWrite, LockedAndWithARegisterToZero) {
  frame_.rsi = 0x0fff000000000000ULL;
  WriteResult r = run({0xf0, 0x48, 0x21, 0x37});  // lock and %rsi,(%rdi)
  ASSERT_EQ(r.status, Status::ok);
  EXPECT_EQ(r.new_entry, 0u);
  EXPECT_EQ(r.rflags, kFlags | rf::zero | rf::parity);
}

TEST_F(EmulatePteWrite, XorWithARegister) {
  frame_.rsi = 0x8000000000000007ULL;
  WriteResult r = run({0x48, 0x31, 0x37});  // xor %rsi,(%rdi)
  ASSERT_EQ(r.status, Status::ok);
  EXPECT_EQ(r.new_entry, 0x0000000012345060ULL);
  // low byte 0x60 has two ones: PF; positive, non-zero.
  EXPECT_EQ(r.rflags, kFlags | rf::parity);
}

TEST_F(EmulatePteWrite, LockedOrAndWithSignExtendedImmediates) {
  // lock orq $0x100,(%rdi) (imm32) sets G
  WriteResult r = run({0xf0, 0x48, 0x81, 0x0f, 0x00, 0x01, 0x00, 0x00});
  ASSERT_EQ(r.status, Status::ok);
  EXPECT_EQ(r.new_entry, kOld | 0x100);
  EXPECT_EQ(r.rflags, kFlags | rf::sign) << "negative; low byte 0x67 has five ones: no PF";
  // lock andq $-3,(%rdi) (imm8 sign-extended to ~2) clears RW
  r = run({0xf0, 0x48, 0x83, 0x27, 0xfd});
  ASSERT_EQ(r.status, Status::ok);
  EXPECT_EQ(r.new_entry, kOld & ~uint64_t{2});
  // lock andq $0x7fffffff,(%rdi): a positive imm32 clears the whole high half
  r = run({0xf0, 0x48, 0x81, 0x27, 0xff, 0xff, 0xff, 0x7f});
  ASSERT_EQ(r.status, Status::ok);
  EXPECT_EQ(r.new_entry, 0x12345067ULL);
  EXPECT_EQ(r.rflags, kFlags) << "positive, non-zero, 0x67 has five ones";
}

TEST_F(EmulatePteWrite, LockedByteAndLikeClearBitWithAConstant) {
  // Linux clear_bit(_PAGE_BIT_RW, pte): lock andb $0xfd,(%rdi)
  WriteResult r = run({0xf0, 0x80, 0x27, 0xfd});
  ASSERT_EQ(r.status, Status::ok);
  EXPECT_EQ(r.new_entry, kOld & ~uint64_t{2});
  // ... and for bit 9: lock andb $0xfd,0x1(%rdi), CR2 at byte 1
  r = run({0xf0, 0x80, 0x67, 0x01, 0xfd}, kEntry + 1, kOld | 0x200);
  ASSERT_EQ(r.status, Status::ok);
  EXPECT_EQ(r.new_entry, kOld);
  // result byte 0x50: positive, two ones
  EXPECT_EQ(r.rflags, kFlags | rf::parity);
}

// ---- bts / btr ----

TEST_F(EmulatePteWrite, LockedBtrWithARegisterBitNumber) {
  frame_.rsi = 1;  // _PAGE_BIT_RW
  frame_.rflags = kFlags | rf::zero;
  WriteResult r = run({0xf0, 0x48, 0x0f, 0xb3, 0x37});  // lock btr %rsi,(%rdi)
  ASSERT_EQ(r.status, Status::ok);
  EXPECT_EQ(r.new_entry, kOld & ~uint64_t{2});
  EXPECT_EQ(r.rflags, kFlags | rf::zero | rf::carry) << "CF = old bit, ZF untouched";
}

TEST_F(EmulatePteWrite, LockedBtsWithARegisterBitNumber) {
  frame_.rsi = 8;  // G, clear in kOld
  frame_.rflags = kFlags | rf::carry;
  WriteResult r = run({0xf0, 0x48, 0x0f, 0xab, 0x37});  // lock bts %rsi,(%rdi)
  ASSERT_EQ(r.status, Status::ok);
  EXPECT_EQ(r.new_entry, kOld | 0x100);
  EXPECT_EQ(r.rflags, kFlags) << "CF = old bit = 0";
}

TEST_F(EmulatePteWrite, BitOffsetsBeyondTheOperandSelectAnotherEntry) {
  // Bit 65 from the entry before: bit 1 of the entry after it.
  frame_.rdi = kEntry - 8;
  frame_.rsi = 65;
  WriteResult r = run({0xf0, 0x48, 0x0f, 0xb3, 0x37});
  ASSERT_EQ(r.status, Status::ok);
  EXPECT_EQ(r.new_entry, kOld & ~uint64_t{2});
  EXPECT_TRUE(r.rflags & rf::carry);
  // A negative offset goes backwards: -63 from the entry after is bit 1 of ours.
  frame_.rdi = kEntry + 8;
  frame_.rsi = static_cast<uint64_t>(-63);
  r = run({0xf0, 0x48, 0x0f, 0xb3, 0x37});
  ASSERT_EQ(r.status, Status::ok);
  EXPECT_EQ(r.new_entry, kOld & ~uint64_t{2});
  // Without the adjustment the address would be the entry at rdi, which is not CR2's.
  frame_.rsi = 1;
  EXPECT_EQ(run({0xf0, 0x48, 0x0f, 0xb3, 0x37}).status, Status::not_the_faulting_address);
}

TEST_F(EmulatePteWrite, BtsBtrWithImmediateBitNumbers) {
  // lock btsq $63,(%rdi) on an entry without NX
  WriteResult r = run({0xf0, 0x48, 0x0f, 0xba, 0x2f, 0x3f}, kEntry, kOld & ~(uint64_t{1} << 63));
  ASSERT_EQ(r.status, Status::ok);
  EXPECT_EQ(r.new_entry, kOld);
  EXPECT_FALSE(r.rflags & rf::carry);
  EXPECT_EQ(r.length, 6);
  // lock btrq $1,(%rdi)
  r = run({0xf0, 0x48, 0x0f, 0xba, 0x37, 0x01});
  ASSERT_EQ(r.status, Status::ok);
  EXPECT_EQ(r.new_entry, kOld & ~uint64_t{2});
  EXPECT_TRUE(r.rflags & rf::carry);
  // An immediate is taken modulo 64 and never moves the address: $65 is bit 1 of this entry.
  r = run({0xf0, 0x48, 0x0f, 0xba, 0x37, 0x41});
  ASSERT_EQ(r.status, Status::ok);
  EXPECT_EQ(r.new_entry, kOld & ~uint64_t{2});
}

// ---- addressing ----

TEST_F(EmulatePteWrite, RipRelativeAddressing) {
  frame_.rax = 0x3067;
  const uint64_t target = kRip + 7 + 0x100;  // next instruction + disp32
  ASSERT_EQ(target % 8, 0u);
  expect_plain_store(run({0x48, 0x89, 0x05, 0x00, 0x01, 0x00, 0x00}, target), 0x3067, 7);  // mov %rax,0x100(%rip)
  EXPECT_EQ(run({0x48, 0x89, 0x05, 0x00, 0x01, 0x00, 0x00}, target + 8).status, Status::not_the_faulting_address);
}

TEST_F(EmulatePteWrite, BaseIndexScaleDisplacement) {
  frame_.rax = 0x4067;
  frame_.rdi = kTable;
  frame_.rcx = 2;
  // mov %rax,0x8(%rdi,%rcx,8) = kTable + 16 + 8 = kEntry
  expect_plain_store(run({0x48, 0x89, 0x44, 0xcf, 0x08}), 0x4067, 5);
  frame_.rcx = 3;
  EXPECT_EQ(run({0x48, 0x89, 0x44, 0xcf, 0x08}).status, Status::not_the_faulting_address);
}

TEST_F(EmulatePteWrite, NegativeDisplacement) {
  frame_.rax = 0x5067;
  frame_.rdi = kEntry + 16;
  expect_plain_store(run({0x48, 0x89, 0x47, 0xf0}), 0x5067, 4);  // mov %rax,-0x10(%rdi)
}

TEST_F(EmulatePteWrite, FsAndGsOverridesAddTheSegmentBase) {
  frame_.rax = 0x6067;
  frame_.rdi = kEntry - kTable;
  segments_.fs = kTable;
  segments_.gs = kTable + 0x1000;
  expect_plain_store(run({0x64, 0x48, 0x89, 0x07}), 0x6067, 4);                   // mov %rax,%fs:(%rdi)
  expect_plain_store(run({0x65, 0x48, 0x89, 0x07}, kEntry + 0x1000), 0x6067, 4);  // mov %rax,%gs:(%rdi)
  EXPECT_EQ(run({0x65, 0x48, 0x89, 0x07}).status, Status::not_the_faulting_address);
  // A DS override has no base in 64-bit mode.
  EXPECT_EQ(run({0x3e, 0x48, 0x89, 0x07}).status, Status::not_the_faulting_address);
  EXPECT_EQ(run({0x3e, 0x48, 0x89, 0x07}, kEntry - kTable).status, Status::ok);
}

TEST_F(EmulatePteWrite, AddressSizeOverrideWrapsAt4GiB) {
  frame_.rax = 0x7067;
  frame_.rdi = 0xabcd000000000018ULL;  // only edi = 0x18 counts
  segments_.fs = kTable;
  // mov %rax,%fs:(%edi)
  expect_plain_store(run({0x64, 0x67, 0x48, 0x89, 0x07}, kTable + 0x18), 0x7067, 5);
}

// ---- refusals ----

TEST_F(EmulatePteWrite, RefusesAnAddressOtherThanTheFaultingOne) {
  frame_.rax = 1;
  EXPECT_EQ(run({0x48, 0x89, 0x07}, kEntry + 0x40).status, Status::not_the_faulting_address);
  EXPECT_EQ(run({0x48, 0x89, 0x07}, kEntry - 8).status, Status::not_the_faulting_address);
}

TEST_F(EmulatePteWrite, RefusesAWriteStraddlingTwoEntries) {
  // mov %rax,0x4(%rdi): 8 bytes across the boundary, whichever entry CR2 names
  EXPECT_EQ(run({0x48, 0x89, 0x47, 0x04}, kEntry + 4).status, Status::straddles);
  EXPECT_EQ(run({0x48, 0x89, 0x47, 0x04}, kEntry + 8).status, Status::straddles);
  // mov %eax,0x6(%rdi)
  EXPECT_EQ(run({0x89, 0x47, 0x06}, kEntry + 6).status, Status::straddles);
}

TEST_F(EmulatePteWrite, RefusesMisalignedAccesses) {
  // Any misaligned 8-byte access crosses into the next entry.
  EXPECT_EQ(run({0x48, 0x89, 0x47, 0x01}, kEntry + 1).status, Status::straddles);
  // A 4-byte store at offset 2 stays inside the entry but is not naturally aligned.
  EXPECT_EQ(run({0x89, 0x47, 0x02}, kEntry + 2).status, Status::misaligned);
  // A 2-byte store at offset 3.
  EXPECT_EQ(run({0x66, 0x89, 0x47, 0x03}, kEntry + 3).status, Status::misaligned);
}

TEST_F(EmulatePteWrite, RefusesStringInstructions) {
  EXPECT_EQ(decode_status({0xf3, 0x48, 0xab}), Status::unsupported);  // rep stosq
  EXPECT_EQ(decode_status({0x48, 0xab}), Status::unsupported);        // stosq
  EXPECT_EQ(decode_status({0x48, 0xa5}), Status::unsupported);        // movsq
  EXPECT_EQ(decode_status({0xf3, 0x48, 0xa5}), Status::unsupported);  // rep movsq
}

TEST_F(EmulatePteWrite, RefusesVectorStores) {
  EXPECT_EQ(decode_status({0x66, 0x0f, 0xd6, 0x07}), Status::unsupported);  // movq %xmm0,(%rdi)
  EXPECT_EQ(decode_status({0x66, 0x0f, 0x7f, 0x07}), Status::unsupported);  // movdqa %xmm0,(%rdi)
  EXPECT_EQ(decode_status({0x0f, 0x11, 0x07}), Status::unsupported);        // movups %xmm0,(%rdi)
  EXPECT_EQ(decode_status({0xc5, 0xf9, 0x7f, 0x07}), Status::unsupported);  // vmovdqa %xmm0,(%rdi)
  EXPECT_EQ(decode_status({0x48, 0x0f, 0xc3, 0x07}), Status::unsupported);  // movnti %rax,(%rdi)
}

TEST_F(EmulatePteWrite, RefusesOtherInstructions) {
  EXPECT_EQ(decode_status({0x0f, 0x0b}), Status::unsupported);                    // ud2
  EXPECT_EQ(decode_status({0x48, 0x8b, 0x07}), Status::unsupported);              // mov (%rdi),%rax: a read
  EXPECT_EQ(decode_status({0x8c, 0x07}), Status::unsupported);                    // mov %es,(%rdi)
  EXPECT_EQ(decode_status({0x48, 0x01, 0x07}), Status::unsupported);              // add %rax,(%rdi)
  EXPECT_EQ(decode_status({0xf0, 0x48, 0x0f, 0xc1, 0x07}), Status::unsupported);  // lock xadd
  EXPECT_EQ(decode_status({0xf0, 0x48, 0x0f, 0xbb, 0x37}), Status::unsupported);  // lock btc
  EXPECT_EQ(decode_status({0xff, 0x37}), Status::unsupported);                    // push (%rdi)
  EXPECT_EQ(decode_status({0x8f, 0x07}), Status::unsupported);                    // pop (%rdi)
  EXPECT_EQ(decode_status({0x48, 0x87, 0xc6}), Status::unsupported);              // xchg %rax,%rsi: no memory
  EXPECT_EQ(decode_status({0x48, 0x0f, 0xc7, 0x0f}), Status::unsupported);        // cmpxchg16b (%rdi)
  EXPECT_EQ(decode_status({0x06}), Status::undecodable);                          // push %es: invalid in 64-bit
  EXPECT_EQ(decode_status({0xf0, 0x48, 0x89, 0x07}), Status::undecodable);        // lock mov
}

TEST_F(EmulatePteWrite, RefusesInstructionsLongerThanTheBytesAvailable) {
  EXPECT_EQ(decode_status({0x48, 0x89}), Status::truncated);
  EXPECT_EQ(decode_status({0x48, 0xc7, 0x07, 0x67, 0x30}), Status::truncated);  // imm32 cut short
  EXPECT_EQ(decode_status({0xf0}), Status::truncated);
  EXPECT_EQ(pte_write::decode(nullptr, 0).status, Status::truncated);
  // Trailing bytes after a complete instruction do not matter.
  EXPECT_EQ(decode_status({0x48, 0x89, 0x07, 0x0f, 0x0b}), Status::ok);
}

TEST_F(EmulatePteWrite, ARefusedResultLeavesTheGuestUntouched) {
  frame_.rax = 0x1234;
  const TrapFrame before = frame_;
  WriteResult r = run({0x48, 0x87, 0x07}, kEntry + 0x40);  // xchg at the wrong address
  ASSERT_NE(r.status, Status::ok);
  pte_write::apply(r, frame_);
  EXPECT_EQ(0, std::memcmp(&before, &frame_, sizeof(TrapFrame)));
}

TEST_F(EmulatePteWrite, ExecuteReadsNothingButItsArguments) {
  // decode once, execute against different register values and entries
  std::vector<uint8_t> bytes{0xf0, 0x48, 0x0f, 0xb1, 0x37};
  pte_write::DecodeResult d = pte_write::decode(bytes.data(), bytes.size());
  ASSERT_EQ(d.status, Status::ok);
  EXPECT_EQ(d.write.operation, pte_write::Operation::cmpxchg);
  EXPECT_EQ(d.write.width, 8);
  frame_.rax = 1;
  frame_.rsi = 2;
  EXPECT_EQ(pte_write::execute(d.write, frame_, segments_, kEntry, 1).new_entry, 2u);
  EXPECT_FALSE(pte_write::execute(d.write, frame_, segments_, kEntry, 3).writes);
}
