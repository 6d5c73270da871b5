#include "trace/analyze/cpu_hz.h"

#include <cstdio>
#include <cstdlib>

#include "trace/format/events.h"

namespace trace {

std::string CpuHz::describe() const
{
    double value = double(hz);
    char suffix = ' ';
    if (hz > 1000000000ull) {
        value /= 1e9;
        suffix = 'G';
    } else if (hz > 1000000ull) {
        value /= 1e6;
        suffix = 'M';
    } else if (hz > 1000ull) {
        value /= 1e3;
        suffix = 'k';
    }
    char text[32];
    std::snprintf(text, sizeof text, "%1.2f %cHz", value, suffix);
    return text;
}

const char* CpuHz::source_name() const
{
    switch (source) {
    case Source::option: return "option";
    case Source::trace: return "trace";
    case Source::fallback: return "default";
    }
    return "?";
}

std::optional<uint64_t> parse_cpu_hz(const std::string& text)
{
    if (text.empty())
        return std::nullopt;
    char* end = nullptr;
    double base = std::strtod(text.c_str(), &end);
    if (end == text.c_str() || base <= 0 || base > 1e13)
        return std::nullopt;
    double scale = 1;
    std::string suffix(end);
    if (suffix == "G")
        scale = 1e9;
    else if (suffix == "M")
        scale = 1e6;
    else if (suffix == "K" || suffix == "k")
        scale = 1e3;
    else if (!suffix.empty())
        return std::nullopt;
    uint64_t hz = uint64_t(base * scale);
    return hz ? std::optional<uint64_t>(hz) : std::nullopt;
}

CpuHz choose_cpu_hz(const TraceFile& file, std::optional<uint64_t> option)
{
    if (option)
        return {*option, CpuHz::Source::option};
    for (const ParsedRecord& r : file.records)
        if (r.event == events::kTscFrequency && r.extra_count == 2 && r.extra64(0))
            return {r.extra64(0), CpuHz::Source::trace};
    return {};
}

} // namespace trace
