// The console backend's ring arithmetic (xenconsoled's role): the guest's output ring drained,
// the client's input put into the input ring. Pure: the ring is a copy the daemon read through
// the relay; unit-tested in tests/unit/daemon_console_ring_test.cpp.
#pragma once
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

namespace pvhv::daemon {

// struct xencons_interface (xen/io/console.h): in[1024], out[2048], then the four indexes.
constexpr size_t kConsoleInBytes = 1024, kConsoleOutBytes = 2048;
constexpr size_t kConsoleOutOffset = 1024, kInConsOffset = 3072, kInProdOffset = 3076, kOutConsOffset = 3080,
                 kOutProdOffset = 3084, kConsoleRingBytes = 3088;

struct OutputDrain {
  std::string bytes;       // what the guest wrote since `cons`
  uint32_t cons = 0;       // the new out_cons to write back
  bool bad_index = false;  // prod - cons exceeded the ring: the guest's indexes were nonsense
};
// Everything between cons and prod; a guest claiming more than the ring holds gets what the
// ring holds (its last 2048 bytes), so a hostile index costs it its own output, nothing more.
OutputDrain drain_output(uint32_t cons, uint32_t prod, std::span<const char> out_ring);

struct InputFill {
  std::string bytes;  // to write at ring offset `offset` (may wrap: written in two pieces)
  uint32_t offset = 0;
  uint32_t prod = 0;  // the new in_prod
  size_t taken = 0;   // how many of `pending` went in
};
// As much of `pending` as the input ring has room for (never more: the guest reads at its pace).
InputFill fill_input(uint32_t cons, uint32_t prod, std::string_view pending);

}  // namespace pvhv::daemon
