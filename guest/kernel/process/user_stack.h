#pragma once
// The initial user stack of a new program, laid out as the Linux x86-64 ABI (and Linux's
// execve) does it. From the top down:
//
//   8 zero bytes | argv strings, envp strings | 16 random bytes (AT_RANDOM) | padding |
//   auxv pairs ending with AT_NULL | NULL | envp[] | NULL | argv[] | argc   <- rsp, 16-aligned
//
// The builder writes into a kernel buffer that stands for the `capacity` bytes below `top`,
// so the caller can copy it into the frames of an address space that is not active yet.
#include <stddef.h>
#include <stdint.h>

namespace lib {

struct UserStackInput {
  const char* const* argv;
  size_t argc;
  const char* const* envp;
  size_t envc;
  const uint64_t (*auxv)[2];  // key/value pairs; AT_RANDOM and AT_NULL are added here
  size_t auxc;
  uint8_t random[16];
};

struct UserStackLayout {
  uint64_t rsp;     // initial stack pointer (points at argc); 0 if it does not fit
  uint64_t argv;    // address of argv[0]'s pointer slot
  uint64_t envp;    // address of envp[0]'s pointer slot
  uint64_t auxv;    // address of the first auxv pair
  uint64_t random;  // address of the 16 random bytes
};

constexpr uint64_t kAtRandomKey = 25;

// image[i] is the byte at address top - capacity + i. Bytes outside the layout are left
// as they are (callers hand in zeroed memory).
UserStackLayout build_user_stack(const UserStackInput& input, uint64_t top, uint8_t* image, size_t capacity);

}  // namespace lib
