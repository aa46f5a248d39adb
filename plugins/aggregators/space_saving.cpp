#include "space_saving.h"

#include <algorithm>
#include <functional>

namespace crank::aggregators {

SpaceSaving::SpaceSaving(std::size_t capacity) : capacity_(std::max<std::size_t>(capacity, 1)) {
    std::size_t table_size = 4;
    while (table_size < capacity_ * 2) {
        table_size *= 2;
    }
    mask_ = table_size - 1;
    table_.assign(table_size, kEmpty);
    slots_.reserve(capacity_);
    heap_.reserve(capacity_);
}

std::size_t SpaceSaving::probe(std::string_view value, std::uint64_t hash) const {
    std::size_t position = home(hash);
    while (true) {
        const std::uint32_t slot = table_[position];
        if (slot == kEmpty ||
            (slots_[slot].hash == hash && std::string_view(slots_[slot].value) == value)) {
            return position;
        }
        position = (position + 1) & mask_;
    }
}

void SpaceSaving::eraseFromTable(std::uint32_t slot) {
    std::size_t hole = home(slots_[slot].hash);
    while (table_[hole] != slot) {
        hole = (hole + 1) & mask_;
    }
    // Backward-shift deletion: move up every following entry whose home does not lie in
    // (hole, next], so that lookups never meet a gap before their entry.
    std::size_t next = hole;
    while (true) {
        next = (next + 1) & mask_;
        const std::uint32_t moved = table_[next];
        if (moved == kEmpty) {
            break;
        }
        const std::size_t want = home(slots_[moved].hash);
        const bool stays =
            hole <= next ? (hole < want && want <= next) : (hole < want || want <= next);
        if (!stays) {
            table_[hole] = moved;
            hole = next;
        }
    }
    table_[hole] = kEmpty;
}

void SpaceSaving::swapHeap(std::size_t a, std::size_t b) {
    std::swap(heap_[a], heap_[b]);
    slots_[heap_[a]].heap_position = static_cast<std::uint32_t>(a);
    slots_[heap_[b]].heap_position = static_cast<std::uint32_t>(b);
}

void SpaceSaving::siftDown(std::size_t position) {
    const std::size_t size = heap_.size();
    while (true) {
        const std::size_t left = position * 2 + 1;
        if (left >= size) {
            return;
        }
        std::size_t smallest = left;
        const std::size_t right = left + 1;
        if (right < size && slots_[heap_[right]].count < slots_[heap_[left]].count) {
            smallest = right;
        }
        if (slots_[heap_[position]].count <= slots_[heap_[smallest]].count) {
            return;
        }
        swapHeap(position, smallest);
        position = smallest;
    }
}

void SpaceSaving::siftUp(std::size_t position) {
    while (position > 0) {
        const std::size_t parent = (position - 1) / 2;
        if (slots_[heap_[parent]].count <= slots_[heap_[position]].count) {
            return;
        }
        swapHeap(position, parent);
        position = parent;
    }
}

void SpaceSaving::add(std::string_view value) {
    ++total_;
    const std::uint64_t hash = std::hash<std::string_view>{}(value);
    std::size_t position = probe(value, hash);
    if (table_[position] != kEmpty) {
        Slot& slot = slots_[table_[position]];
        ++slot.count;
        siftDown(slot.heap_position);
        return;
    }
    if (slots_.size() < capacity_) {
        const auto number = static_cast<std::uint32_t>(slots_.size());
        Slot& slot = slots_.emplace_back();
        slot.value.assign(value);
        slot.count = 1;
        slot.hash = hash;
        slot.heap_position = static_cast<std::uint32_t>(heap_.size());
        heap_.push_back(number);
        table_[position] = number;
        siftUp(slot.heap_position);
        return;
    }
    // Full: the value takes over the smallest counter, inheriting its count as possible error.
    evicted_ = true;
    const std::uint32_t victim = heap_.front();
    eraseFromTable(victim);
    Slot& slot = slots_[victim];
    slot.value.assign(value);
    slot.hash = hash;
    slot.error = slot.count;
    ++slot.count;
    table_[probe(value, hash)] = victim;
    siftDown(0);
}

std::vector<SpaceSaving::Counter> SpaceSaving::top(std::size_t k) const {
    std::vector<Counter> counters;
    counters.reserve(slots_.size());
    for (const Slot& slot : slots_) {
        counters.push_back({slot.value, slot.count, slot.error});
    }
    auto before = [](const Counter& a, const Counter& b) {
        return a.count != b.count ? a.count > b.count : a.value < b.value;
    };
    const std::size_t keep = std::min(k, counters.size());
    std::partial_sort(counters.begin(), counters.begin() + static_cast<std::ptrdiff_t>(keep),
                      counters.end(), before);
    counters.resize(keep);
    return counters;
}

std::size_t SpaceSaving::memoryEstimate() const {
    std::size_t bytes = slots_.capacity() * sizeof(Slot) +
                        heap_.capacity() * sizeof(std::uint32_t) +
                        table_.capacity() * sizeof(std::uint32_t);
    for (const Slot& slot : slots_) {
        bytes += slot.value.capacity() + 1;
    }
    return bytes;
}

}  // namespace crank::aggregators
