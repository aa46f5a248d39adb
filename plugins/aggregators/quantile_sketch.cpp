#include "quantile_sketch.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace crank::aggregators {

namespace {

constexpr double kMinIndexable = std::numeric_limits<double>::min();

}  // namespace

QuantileSketch::QuantileSketch(double alpha, std::size_t max_buckets)
    : gamma_((1.0 + alpha) / (1.0 - alpha)),
      inverse_log_gamma_(1.0 / std::log(gamma_)),
      max_buckets_(std::max<std::size_t>(max_buckets, 1)) {}

int QuantileSketch::index(double magnitude) const {
    return static_cast<int>(std::ceil(std::log(magnitude) * inverse_log_gamma_));
}

double QuantileSketch::representative(int index) const {
    return 2.0 * std::pow(gamma_, index) / (gamma_ + 1.0);
}

void QuantileSketch::Store::add(int index, std::size_t max_buckets) {
    ++total;
    if (counts.empty()) {
        offset = index;
        counts.assign(1, 0);
    }
    const int size = static_cast<int>(counts.size());
    if (index >= offset && index < offset + size) {
        ++counts[static_cast<std::size_t>(index - offset)];
        return;
    }
    // Grow the range to take `index`, keeping at most max_buckets: the lowest buckets merge.
    const int high = std::max(index, offset + size - 1);
    int low = std::min(index, offset);
    if (static_cast<std::size_t>(high - low) + 1 > max_buckets) {
        low = high - static_cast<int>(max_buckets) + 1;
        collapsed = true;
    }
    std::vector<std::uint64_t> grown(static_cast<std::size_t>(high - low) + 1, 0);
    for (int i = 0; i < size; ++i) {
        const int target = std::max(offset + i, low);
        grown[static_cast<std::size_t>(target - low)] += counts[static_cast<std::size_t>(i)];
    }
    counts.swap(grown);
    offset = low;
    ++counts[static_cast<std::size_t>(std::max(index, low) - low)];
}

std::uint64_t QuantileSketch::rankIndex(double q, std::uint64_t count) {
    if (count == 0) {
        return 0;
    }
    // ceil(q * n) - 1, with q * n nudged down so that 0.95 * 100 is 95 rather than 95.00000001.
    const double rank =
        std::ceil(std::clamp(q, 0.0, 1.0) * static_cast<double>(count) * (1.0 - 1e-12));
    const auto index = static_cast<std::uint64_t>(std::max(rank, 1.0)) - 1;
    return std::min(index, count - 1);
}

void QuantileSketch::add(double value) {
    if (count_ < kExactValues) {
        exact_.push_back(value);
    } else if (count_ == kExactValues) {
        std::vector<double>().swap(exact_);
    }
    if (count_ == 0) {
        min_ = value;
        max_ = value;
    } else {
        min_ = std::min(min_, value);
        max_ = std::max(max_, value);
    }
    ++count_;
    if (value >= kMinIndexable) {
        positive_.add(index(value), max_buckets_);
    } else if (value <= -kMinIndexable) {
        negative_.add(index(-value), max_buckets_);
    } else {
        ++zero_count_;
    }
}

double QuantileSketch::quantile(double q) const {
    if (count_ == 0) {
        return 0.0;
    }
    const std::uint64_t rank = rankIndex(q, count_);
    if (!exact_.empty()) {
        std::vector<double> sorted = exact_;
        std::nth_element(sorted.begin(), sorted.begin() + static_cast<std::ptrdiff_t>(rank),
                         sorted.end());
        return sorted[rank];
    }
    double estimate = 0.0;
    std::uint64_t seen = 0;
    bool found = false;
    // Sorted order: negatives from the largest magnitude down, zeros, positives upwards.
    for (std::size_t i = negative_.counts.size(); i-- > 0 && !found;) {
        seen += negative_.counts[i];
        if (seen > rank) {
            estimate = -representative(negative_.offset + static_cast<int>(i));
            found = true;
        }
    }
    if (!found) {
        seen += zero_count_;
        if (seen > rank) {
            estimate = 0.0;
            found = true;
        }
    }
    for (std::size_t i = 0; i < positive_.counts.size() && !found; ++i) {
        seen += positive_.counts[i];
        if (seen > rank) {
            estimate = representative(positive_.offset + static_cast<int>(i));
            found = true;
        }
    }
    if (!found) {
        estimate = max_;
    }
    return std::clamp(estimate, min_, max_);
}

std::size_t QuantileSketch::memoryEstimate() const {
    return sizeof(*this) +
           (positive_.counts.capacity() + negative_.counts.capacity()) * sizeof(std::uint64_t) +
           exact_.capacity() * sizeof(double);
}

}  // namespace crank::aggregators
