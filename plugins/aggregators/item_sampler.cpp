#include "item_sampler.h"

#include <algorithm>
#include <random>

namespace crank::aggregators {

ItemSampler::ItemSampler(Mode mode, std::size_t size, std::optional<std::uint64_t> seed,
                         std::size_t max_item_bytes)
    : mode_(mode), capacity_(std::max<std::size_t>(size, 1)), max_item_bytes_(max_item_bytes) {
    if (seed) {
        state_ = *seed;
    } else {
        std::random_device device;
        state_ = (static_cast<std::uint64_t>(device()) << 32U) ^ device();
    }
    samples_.reserve(capacity_);
}

std::uint64_t ItemSampler::next() {
    // SplitMix64 (Steele, Lea, Flood 2014): small, fast, and the same everywhere.
    std::uint64_t z = (state_ += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30U)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27U)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31U);
}

void ItemSampler::keep(std::size_t slot, std::string_view item_json) {
    if (slot == samples_.size()) {
        samples_.emplace_back();
    }
    samples_[slot].arrival = seen_;
    samples_[slot].item.assign(item_json, max_item_bytes_);
}

void ItemSampler::offer(std::string_view item_json) {
    const std::uint64_t n = seen_;
    if (n < capacity_) {
        keep(static_cast<std::size_t>(n), item_json);
    } else {
        switch (mode_) {
            case Mode::first:
                break;
            case Mode::last:
                keep(static_cast<std::size_t>(n % capacity_), item_json);
                break;
            case Mode::reservoir: {
                // Item n (0-based) replaces a random sample with probability capacity / (n + 1).
                const std::uint64_t pick = next() % (n + 1);
                if (pick < capacity_) {
                    keep(static_cast<std::size_t>(pick), item_json);
                }
                break;
            }
        }
    }
    ++seen_;
}

void ItemSampler::write(JsonWriter& writer) const {
    std::vector<const Sample*> ordered;
    ordered.reserve(samples_.size());
    for (const Sample& sample : samples_) {
        ordered.push_back(&sample);
    }
    std::sort(ordered.begin(), ordered.end(),
              [](const Sample* a, const Sample* b) { return a->arrival < b->arrival; });
    writer.StartArray();
    for (const Sample* sample : ordered) {
        sample->item.write(writer);
    }
    writer.EndArray();
}

bool ItemSampler::anyCut() const {
    return std::any_of(samples_.begin(), samples_.end(),
                       [](const Sample& sample) { return sample.item.cut(); });
}

std::size_t ItemSampler::memoryEstimate() const {
    std::size_t bytes = samples_.capacity() * sizeof(Sample);
    for (const Sample& sample : samples_) {
        bytes += sample.item.memoryEstimate() - sizeof(KeptItem);
    }
    return bytes;
}

}  // namespace crank::aggregators
