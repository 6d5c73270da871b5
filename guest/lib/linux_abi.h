#pragma once
// The parts of the Linux x86-64 user ABI the kernel implements: system call numbers, errno
// values and auxiliary vector keys (values from the Linux UAPI; retyped because the kernel
// cannot include host headers).
#include <stdint.h>

namespace linux_abi {

enum Syscall : uint64_t {
  kRead = 0,
  kWrite = 1,
  kClose = 3,
  kMmap = 9,
  kMprotect = 10,
  kMunmap = 11,
  kBrk = 12,
  kRtSigaction = 13,
  kRtSigprocmask = 14,
  kIoctl = 16,
  kWritev = 20,
  kMadvise = 28,
  kSchedYield = 24,
  kGetpid = 39,
  kFork = 57,
  kVfork = 58,
  kExecve = 59,
  kExit = 60,
  kWait4 = 61,
  kKill = 62,
  kGetuid = 102,
  kGetgid = 104,
  kGeteuid = 107,
  kGetegid = 108,
  kGetppid = 110,
  kArchPrctl = 158,
  kIopl = 172,
  kGettid = 186,
  kSetTidAddress = 218,
  kClockGettime = 228,
  kExitGroup = 231,
};

enum Errno : long {
  kENOENT = 2,
  kESRCH = 3,
  kE2BIG = 7,
  kENOEXEC = 8,
  kEBADF = 9,
  kECHILD = 10,
  kEAGAIN = 11,
  kENOMEM = 12,
  kEFAULT = 14,
  kEINVAL = 22,
  kENOTTY = 25,
  kENOSYS = 38,
};

constexpr uint64_t kArchSetFs = 0x1002, kArchGetFs = 0x1003;
constexpr uint64_t kMapFixed = 0x10, kMapAnonymous = 0x20;
constexpr uint64_t kProtWrite = 2;
constexpr uint64_t kClockRealtime = 0, kClockMonotonic = 1, kClockMonotonicRaw = 4, kClockRealtimeCoarse = 5,
                   kClockMonotonicCoarse = 6, kClockBoottime = 7;

enum AuxKey : uint64_t {
  kAtNull = 0,
  kAtPhdr = 3,
  kAtPhent = 4,
  kAtPhnum = 5,
  kAtPagesz = 6,
  kAtEntry = 9,
  kAtUid = 11,
  kAtEuid = 12,
  kAtGid = 13,
  kAtEgid = 14,
  kAtSecure = 23,
  kAtRandom = 25,
};

struct Timespec {
  int64_t seconds;
  int64_t nanoseconds;
};

struct Iovec {
  uint64_t base;
  uint64_t length;
};

}  // namespace linux_abi
