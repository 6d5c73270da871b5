// Generates the fuzz seed corpus: slices of the Xen fixture, synthetic traces of our own
// (writable and emulate modes, with wrap padding and lost records), and corrupt variants
// (truncated, bit-flipped, bad window sizes, foreign bytes).
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <vector>

#include "trace/capture/synthetic_trace.h"

namespace fs = std::filesystem;
using Bytes = std::vector<uint8_t>;

static void save(const fs::path& dir, const std::string& name, const Bytes& bytes)
{
    std::ofstream(dir / name, std::ios::binary).write(reinterpret_cast<const char*>(bytes.data()), long(bytes.size()));
}

static void corrupt_variants(const fs::path& dir, const std::string& name, const Bytes& good)
{
    save(dir, name, good);
    save(dir, name + ".truncated", Bytes(good.begin(), good.begin() + long(good.size() * 2 / 3 + 1)));
    Bytes flipped = good;
    for (size_t i = 7; i < flipped.size(); i += 97)
        flipped[i] ^= uint8_t(1u << (i % 8));
    save(dir, name + ".bitflip", flipped);
    Bytes window = good;
    if (window.size() > 12)
        window[9] ^= 0x40; // window size
    save(dir, name + ".window", window);
}

int main(int argc, char** argv)
{
    if (argc < 2) {
        std::fprintf(stderr, "usage: trace_make_seeds DIR [XEN_FIXTURE]\n");
        return 1;
    }
    fs::path dir(argv[1]);
    fs::create_directories(dir);
    trace::SyntheticOptions writable, emulate, overflow;
    emulate.writable = false;
    overflow.ring_bytes = 256;
    overflow.drain_each_fork = false;
    corrupt_variants(dir, "writable", trace::make_synthetic_trace(writable));
    corrupt_variants(dir, "emulate", trace::make_synthetic_trace(emulate));
    corrupt_variants(dir, "overflow", trace::make_synthetic_trace(overflow));
    save(dir, "foreign", Bytes{'\x7f', 'E', 'L', 'F', 2, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0});
    save(dir, "empty", Bytes{});
    if (argc > 2) {
        std::ifstream in(argv[2], std::ios::binary);
        Bytes fixture((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
        if (fixture.empty()) {
            std::fprintf(stderr, "trace_make_seeds: cannot read %s\n", argv[2]);
            return 1;
        }
        // The start (lost records, first windows) and a slice from the middle.
        corrupt_variants(dir, "xen-head", Bytes(fixture.begin(), fixture.begin() + long(std::min<size_t>(fixture.size(), 16384))));
        size_t mid = fixture.size() / 2;
        save(dir, "xen-middle", Bytes(fixture.begin() + long(mid), fixture.begin() + long(std::min(fixture.size(), mid + 8192))));
    }
    std::printf("seeds written to %s\n", dir.c_str());
    return 0;
}
