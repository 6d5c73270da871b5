#pragma once
// The page through which a fuzzing domU and dom0's companion talk (fuzz/fuzz*.cpp). It is a
// page-aligned object of the kernel image, so its pseudo-physical frame is the same in every
// domain built from this kernel; dom0 finds the domU's machine frame (the boot domUs' memory is
// one run of frames, in pfn order), maps it with foreigndom and checks the magic.
#include <stdint.h>

namespace kernel {

struct alignas(4096) FuzzMailbox {
  static constexpr uint64_t kMagic = 0x78617a7a75667668ull;  // "hvfuzzax"
  enum State : uint64_t { kIdle = 0, kRunning = 1, kDone = 2 };

  volatile uint64_t magic;
  volatile uint64_t seed;
  volatile uint64_t op;  // operations done so far
  volatile uint64_t state;
  volatile uint64_t audit_request;  // the domU asks for an audit by incrementing this...
  volatile uint64_t audit_request_op;
  volatile uint64_t audit_done;   // ...dom0 sets this to the same value when it has audited
  volatile int64_t audit_result;  // frames that disagree (0: clean), or an error
};

extern FuzzMailbox fuzz_mailbox;

}  // namespace kernel
