#pragma once

// Internal to plugins/aggregators: quantiles over a stream in fixed memory.

#include <cstddef>
#include <cstdint>
#include <vector>

namespace crank::aggregators {

/// A DDSketch (Masson, Rim, Lee 2019): log-spaced buckets with relative accuracy `alpha`.
///
/// A value x > 0 goes to bucket i = ceil(log_gamma(x)) with gamma = (1 + alpha) / (1 - alpha);
/// bucket i stands for (gamma^(i-1), gamma^i] and answers 2 gamma^i / (gamma + 1), which is within
/// alpha * x of every x in it. Negative values use a second store on |x|; values with
/// |x| < 2.2250738585072014e-308 (below the smallest normal double) count as zero.
///
/// quantile(q) answers for the nearest-rank q-quantile x: the value of rank ceil(q * n) (1-based,
/// at least 1) in sorted order. The answer v satisfies |v - x| <= alpha * |x|, as long as no
/// bucket has been collapsed. While at most kExactValues values have been added the answer is
/// exact (they are also kept as they are, then dropped). Each store holds at most `max_buckets`
/// consecutive buckets: when the values of one sign span more than gamma^max_buckets (about 1e17
/// for alpha 0.01 and 2048 buckets), the buckets of the smallest magnitudes are merged into one,
/// and quantiles that fall there lose the guarantee (collapsed() tells). Answers are clamped to the
/// exact [min, max].
///
/// Memory: at most 2 * max_buckets counters of 8 bytes, plus kExactValues doubles at first. add()
/// allocates only when the range of buckets grows.
class QuantileSketch {
public:
    /// Values kept exactly while the count is small.
    static constexpr std::size_t kExactValues = 1024;

    QuantileSketch(double alpha, std::size_t max_buckets);

    /// The 0-based index in sorted order of the nearest-rank q-quantile of `count` values.
    static std::uint64_t rankIndex(double q, std::uint64_t count);

    void add(double value);
    /// Values added.
    std::uint64_t count() const { return count_; }
    double min() const { return min_; }
    double max() const { return max_; }
    /// The estimated q-quantile, q in [0, 1]; 0 when empty.
    double quantile(double q) const;
    /// True once some buckets were merged to respect max_buckets.
    bool collapsed() const { return positive_.collapsed || negative_.collapsed; }
    /// Bytes held.
    std::size_t memoryEstimate() const;

private:
    /// Consecutive buckets [offset, offset + counts.size()).
    struct Store {
        std::vector<std::uint64_t> counts;
        int offset = 0;
        std::uint64_t total = 0;
        bool collapsed = false;
        void add(int index, std::size_t max_buckets);
    };

    int index(double magnitude) const;
    double representative(int index) const;

    double gamma_;
    double inverse_log_gamma_;
    std::size_t max_buckets_;
    Store positive_;
    Store negative_;
    std::uint64_t zero_count_ = 0;
    std::vector<double> exact_;  ///< every value while count_ <= kExactValues
    std::uint64_t count_ = 0;
    double min_ = 0.0;
    double max_ = 0.0;
};

}  // namespace crank::aggregators
