#include "runtime/session_buffer.h"

#include <algorithm>
#include <charconv>

namespace crank::runtime {

std::string_view toString(OverflowPolicy policy) {
    return policy == OverflowPolicy::pause ? "pause" : "drop_oldest";
}

SessionBuffer::SessionBuffer(Limits limits) : limits_(limits) {}

bool SessionBuffer::fitsLocked(std::size_t bytes) const {
    return entries_.size() < limits_.max_items && bytes_ + bytes <= limits_.max_bytes;
}

SessionBuffer::Offer SessionBuffer::offer(std::string&& item) {
    const std::lock_guard<std::mutex> lock(mutex_);
    if (item.size() > limits_.max_bytes) {
        ++counters_.dropped;
        return Offer::dropped;
    }
    if (!fitsLocked(item.size())) {
        if (limits_.overflow == OverflowPolicy::pause) {
            ++counters_.rejected;
            counters_.paused = true;
            return Offer::rejected_full;
        }
        while (!entries_.empty() && !fitsLocked(item.size())) {
            bytes_ -= entries_.front().text.size();
            entries_.pop_front();
            ++counters_.dropped;
        }
    }
    bytes_ += item.size();
    entries_.push_back(Entry{++last_seq_, std::move(item)});
    ++counters_.received;
    counters_.received_bytes += entries_.back().text.size();
    if (limits_.overflow == OverflowPolicy::pause && !fitsLocked(0)) {
        counters_.paused = true;
        return Offer::accepted_pause;
    }
    return Offer::accepted;
}

void SessionBuffer::acknowledgeLocked(std::uint64_t seq) {
    while (!entries_.empty() && entries_.front().seq <= seq) {
        bytes_ -= entries_.front().text.size();
        entries_.pop_front();
    }
    // Resume a paused upstream once half of the buffer is free, so that it does not stop and
    // start for every item.
    if (counters_.paused && entries_.size() <= limits_.max_items / 2 &&
        bytes_ <= limits_.max_bytes / 2) {
        counters_.paused = false;
        resume_due_ = true;
    }
}

Result<SessionBuffer::Page> SessionBuffer::poll(std::optional<std::string_view> cursor,
                                                std::size_t max_items) {
    const std::lock_guard<std::mutex> lock(mutex_);
    std::uint64_t after = 0;
    if (cursor) {
        const char* begin = cursor->data();
        const char* end = begin + cursor->size();
        const auto [ptr, ec] = std::from_chars(begin, end, after);
        if (cursor->empty() || ec != std::errc() || ptr != end) {
            return Error{ErrorCode::invalid_argument,
                         "cursor: expected the cursor a previous poll returned (a number), got \"" +
                             std::string(cursor->substr(0, 64)) + "\""};
        }
        if (after > last_seq_) {
            return Error{ErrorCode::invalid_argument,
                         "cursor: " + std::string(*cursor) +
                             " is ahead of this session, which has received " +
                             std::to_string(last_seq_) + " items"};
        }
        acknowledgeLocked(after);
    } else if (!entries_.empty()) {
        after = entries_.front().seq - 1;
    }
    Page page;
    page.dropped = counters_.dropped;
    const std::size_t count = std::min(max_items, entries_.size());
    page.items.reserve(count);
    for (std::size_t i = 0; i < count; ++i) {
        page.items.push_back(entries_[i].text);
    }
    if (count > 0) {
        page.first_seq = entries_.front().seq;
        page.cursor = std::to_string(entries_[count - 1].seq);
    } else {
        page.cursor = std::to_string(std::max(after, entries_.empty() ? last_seq_ : after));
    }
    page.has_more = entries_.size() > count;
    return page;
}

bool SessionBuffer::takeResume() {
    const std::lock_guard<std::mutex> lock(mutex_);
    const bool due = resume_due_;
    resume_due_ = false;
    return due;
}

SessionBuffer::Counters SessionBuffer::counters() const {
    const std::lock_guard<std::mutex> lock(mutex_);
    Counters c = counters_;
    c.buffered_items = entries_.size();
    c.buffered_bytes = bytes_;
    c.last_seq = last_seq_;
    return c;
}

}  // namespace crank::runtime
