// The single entry point both the libFuzzer target and the replay driver exercise: parse the
// bytes, then run every analysis and report over the result, so a crash anywhere is found.
#pragma once
#include <cstddef>
#include <cstdint>

namespace trace {

int fuzz_one_input(const uint8_t* data, size_t size);

}  // namespace trace
