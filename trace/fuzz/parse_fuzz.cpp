// libFuzzer target over the trace parser and analyses. Build with -DTRACE_FUZZ=ON and clang;
// run: build/bin/trace_parse_fuzz build/trace-fuzz-seeds
#include "trace/fuzz/parse_entry.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  trace::fuzz_one_input(data, size);
  return 0;
}
