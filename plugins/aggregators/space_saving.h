#pragma once

// Internal to plugins/aggregators: heavy hitters over a stream in fixed memory.

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace crank::aggregators {

/// The Space-Saving sketch (Metwally, Agrawal, El Abbadi 2005) with `capacity` counters.
///
/// Guarantees, after N values: while at most `capacity` distinct values have been seen, every
/// count is exact. Beyond that, each reported count overestimates the true count by at most its
/// `error` (itself at most N / capacity), every value whose true count exceeds N / capacity is
/// among the counters, and the counts add up to exactly N.
///
/// Memory: `capacity` keys of at most the longest key added (callers cut keys to kMaxKeyBytes),
/// plus a hash table of 2..4 slots per counter. No allocation per add() once the counters exist,
/// except when a replaced key is longer than the one it replaces.
class SpaceSaving {
public:
    struct Counter {
        std::string_view value;
        std::uint64_t count = 0;
        std::uint64_t error = 0;  ///< the count may exceed the true count by this much
    };

    explicit SpaceSaving(std::size_t capacity);

    void add(std::string_view value);

    /// The `k` largest counters, by count (descending) then value. Views valid until add().
    std::vector<Counter> top(std::size_t k) const;
    /// Values added.
    std::uint64_t total() const { return total_; }
    /// Distinct values currently counted (at most capacity()).
    std::size_t size() const { return slots_.size(); }
    std::size_t capacity() const { return capacity_; }
    /// True once a counter has been taken over by another value (counts may then be estimates).
    bool evicted() const { return evicted_; }
    /// Bytes held.
    std::size_t memoryEstimate() const;

private:
    struct Slot {
        std::string value;
        std::uint64_t count = 0;
        std::uint64_t error = 0;
        std::uint64_t hash = 0;
        std::uint32_t heap_position = 0;
    };
    static constexpr std::uint32_t kEmpty = 0xFFFFFFFFU;

    std::size_t home(std::uint64_t hash) const { return hash & mask_; }
    /// Table position of `value`, or of the empty slot where it would go.
    std::size_t probe(std::string_view value, std::uint64_t hash) const;
    void eraseFromTable(std::uint32_t slot);
    void siftDown(std::size_t position);
    void siftUp(std::size_t position);
    void swapHeap(std::size_t a, std::size_t b);

    std::size_t capacity_;
    std::size_t mask_;
    std::vector<Slot> slots_;
    std::vector<std::uint32_t> heap_;   ///< slot numbers, a min-heap on count
    std::vector<std::uint32_t> table_;  ///< open addressing (linear probing) into slots_
    std::uint64_t total_ = 0;
    bool evicted_ = false;
};

}  // namespace crank::aggregators
