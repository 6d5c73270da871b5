// Count, total and distribution of a duration in TSC cycles, as xenalyze keeps them
// (including its sampling: the first 1024 samples, doubled as they fill, unbounded by
// default), so percentiles can be printed the same way.
#pragma once
#include <cstdint>
#include <vector>

namespace trace {

class CycleSummary {
public:
    // A zero-length interval counts as an event but adds no sample (as in xenalyze).
    void add(uint64_t cycles)
    {
        events_++;
        if (cycles == 0)
            return;
        samples_.push_back(int64_t(cycles));
        count_++;
        cycles_ += cycles;
    }

    uint64_t count() const { return count_; }
    uint64_t events() const { return events_; }
    uint64_t cycles() const { return cycles_; }
    uint64_t average() const { return count_ ? cycles_ / count_ : 0; }

    // The sample at rank count*percent/100 (xenalyze's "percentile").
    int64_t percentile(int percent) const;
    // The sample below which `percent` of the total *time* lies (xenalyze's
    // "self_weighted_percentile"): long intervals weigh more than short ones.
    int64_t weighted_percentile(int percent) const;

private:
    uint64_t events_ = 0;
    uint64_t count_ = 0;
    uint64_t cycles_ = 0;
    std::vector<int64_t> samples_;
};

} // namespace trace
