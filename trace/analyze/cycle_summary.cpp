#include "trace/analyze/cycle_summary.h"

#include <algorithm>

namespace trace {

int64_t CycleSummary::percentile(int percent) const
{
    if (samples_.empty())
        return 0;
    std::vector<int64_t> sorted = samples_;
    size_t k = sorted.size() * size_t(percent) / 100;
    std::nth_element(sorted.begin(), sorted.begin() + long(k), sorted.end());
    return sorted[k];
}

int64_t CycleSummary::weighted_percentile(int percent) const
{
    if (samples_.empty())
        return 0;
    std::vector<int64_t> sorted = samples_;
    std::sort(sorted.begin(), sorted.end());
    int64_t total = 0;
    for (int64_t s : sorted)
        total += s;
    int64_t target = total * percent / 100;
    // The first sample whose cumulative weight passes the target.
    int64_t below = 0;
    for (int64_t s : sorted) {
        if (below + s > target)
            return s;
        below += s;
    }
    return sorted.back();
}

} // namespace trace
