// Runs the fuzz entry point over files or directories of inputs (a corpus), for compilers
// without libFuzzer and for CTest. Fails if the corpus is empty.
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <vector>

#include "trace/fuzz/parse_entry.h"

namespace fs = std::filesystem;

static bool replay(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  trace::fuzz_one_input(bytes.data(), bytes.size());
  return bool(in) || in.eof();
}

int main(int argc, char** argv) {
  size_t inputs = 0;
  for (int i = 1; i < argc; ++i) {
    fs::path arg(argv[i]);
    std::error_code ec;
    if (fs::is_directory(arg, ec)) {
      for (const auto& entry : fs::directory_iterator(arg))
        if (entry.is_regular_file()) inputs += replay(entry.path());
    } else if (fs::exists(arg, ec)) {
      inputs += replay(arg);
    }
  }
  std::printf("replayed %zu inputs\n", inputs);
  return inputs ? 0 : 1;
}
