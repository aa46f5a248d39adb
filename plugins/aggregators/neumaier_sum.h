#pragma once

// Internal to plugins/aggregators: compensated summation.

#include <cmath>

namespace crank::aggregators {

/// A sum of doubles with Neumaier's compensation: the error does not grow with the number of
/// terms (about one rounding of the result, unless the terms cancel catastrophically).
class NeumaierSum {
public:
    void add(double term) {
        const double next = sum_ + term;
        if (std::fabs(sum_) >= std::fabs(term)) {
            compensation_ += (sum_ - next) + term;
        } else {
            compensation_ += (term - next) + sum_;
        }
        sum_ = next;
    }

    double value() const { return sum_ + compensation_; }

private:
    double sum_ = 0.0;
    double compensation_ = 0.0;
};

}  // namespace crank::aggregators
