// The console backend's ring arithmetic (xenconsoled's role): the guest's output ring drained,
// the client's input put into the input ring. Pure: the ring is a copy the daemon read through
// the relay; unit-tested in tests/unit/daemon_console_ring_test.cpp.
#pragma once
#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
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

// Reads `length` bytes at `offset` of the guest's console page (a foreign read through the
// relay); false when it cannot be read. Not atomic: the guest may write between any two bytes.
using ConsolePageReader = std::function<bool(uint32_t offset, void* out, size_t length)>;

struct ConsoleRead {
  uint32_t in_cons = 0, in_prod = 0;  // the input ring's indexes, for fill_input
  OutputDrain output;                 // what the guest wrote, with the out_cons to write back
};
// The indexes first, then the output bytes, as xenconsoled reads: the guest publishes its bytes
// before out_prod, so every byte up to the out_prod read first is there when out[] is read
// after it. (One read of the whole page copies out[] before out_prod, which lies after it, and
// can take an index newer than the bytes it copied.) out[] is read only when there is output.
// nullopt when a read fails.
std::optional<ConsoleRead> read_console(const ConsolePageReader& read);

struct InputFill {
  std::string bytes;  // to write at ring offset `offset` (may wrap: written in two pieces)
  uint32_t offset = 0;
  uint32_t prod = 0;  // the new in_prod
  size_t taken = 0;   // how many of `pending` went in
};
// As much of `pending` as the input ring has room for (never more: the guest reads at its pace).
InputFill fill_input(uint32_t cons, uint32_t prod, std::string_view pending);

}  // namespace pvhv::daemon
