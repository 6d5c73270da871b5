// The TSC frequency used to turn cycles into seconds: given by the user (--cpu-hz), else the
// frequency our hypervisor records in the trace (TSC_FREQUENCY), else xenalyze's default of
// 2.4 GHz (Xen's own traces do not record it).
#pragma once
#include <cstdint>
#include <optional>
#include <string>

#include "trace/parse/trace_file.h"

namespace trace {

constexpr uint64_t kDefaultCpuHz = 2400000000ull;

struct CpuHz {
    uint64_t hz = kDefaultCpuHz;
    enum class Source { option, trace, fallback } source = Source::fallback;

    double seconds(uint64_t cycles) const { return double(cycles) / double(hz); }
    std::string describe() const;   // "2.40 GHz", as xenalyze prints it
    const char* source_name() const;
};

// xenalyze's syntax: a number with an optional G, M or K suffix ("2.4G", "3000000000").
std::optional<uint64_t> parse_cpu_hz(const std::string& text);

CpuHz choose_cpu_hz(const TraceFile& file, std::optional<uint64_t> option);

} // namespace trace
