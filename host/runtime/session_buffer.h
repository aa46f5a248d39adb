#pragma once

// The bounded buffer of one session (execution mode `session`, issue 6): the items the upstream
// pushes, numbered from 1, kept until a poll acknowledges them. `_poll {cursor}` returns the items
// after the cursor and acknowledges everything up to it, so that polling twice with the same
// cursor returns the same items, and a client that lost an answer can ask again.
//
// Bounded by max_items and max_bytes (the item texts). When an item does not fit:
//  - pause: the upstream is asked to wait (the plugin keeps the item and emits it again after
//    stream_resume); it is told to resume once a poll has freed half of the buffer;
//  - drop_oldest: the oldest unacknowledged items make room and are counted as dropped.
// An item larger than max_bytes on its own can never fit: it is dropped and counted.
//
// Thread-safe: the plugin offers items on its thread while polls come from request threads.

#include <cstddef>
#include <cstdint>
#include <deque>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "util/error.h"

namespace crank::runtime {

enum class OverflowPolicy { pause, drop_oldest };

std::string_view toString(OverflowPolicy policy);

class SessionBuffer {
public:
    struct Limits {
        std::uint64_t max_items = 100;
        std::uint64_t max_bytes = std::uint64_t{256} * 1024;
        OverflowPolicy overflow = OverflowPolicy::pause;
    };

    /// What offer() did with an item; maps onto crank_emit_result.
    enum class Offer {
        accepted,        ///< kept
        accepted_pause,  ///< kept, and the buffer is now full: the upstream should pause
        rejected_full,   ///< not kept (pause policy): emit it again after the resume
        dropped,         ///< not kept and counted: larger than max_bytes on its own
    };

    /// One answer to a poll.
    struct Page {
        std::vector<std::string> items;
        std::uint64_t first_seq = 0;  ///< the number of items[0] (0 when there is none)
        std::string cursor;           ///< pass it to the next poll: the last item returned
        bool has_more = false;        ///< more items are buffered after this page
        std::uint64_t dropped = 0;    ///< items dropped since the session started
    };

    explicit SessionBuffer(Limits limits);

    /// Takes one item (JSON text that has been through the safety stage). `item` is moved from
    /// only when it is taken (accepted, accepted_pause); after rejected_full (and dropped) it is
    /// left as it was, so that the caller can offer it again without a copy.
    Offer offer(std::string&& item);

    /// The items after `cursor` (all buffered ones without a cursor), at most `max_items`, and
    /// acknowledges every item up to the cursor. A cursor is the decimal number of an item; one
    /// from before the oldest buffered item (dropped meanwhile) reads from the oldest one.
    /// Errors (ErrorCode::invalid_argument): a cursor that is not a number this session has
    /// handed out.
    Result<Page> poll(std::optional<std::string_view> cursor, std::size_t max_items);

    /// True once after the buffer has room again for an upstream that was asked to pause: the
    /// caller then resumes the stream (stream_resume).
    bool takeResume();

    struct Counters {
        std::uint64_t received = 0;        ///< items offered and kept
        std::uint64_t received_bytes = 0;  ///< their text's bytes
        std::uint64_t dropped = 0;         ///< items dropped (drop_oldest, or too large)
        std::uint64_t rejected = 0;        ///< offers refused while full (pause)
        std::uint64_t buffered_items = 0;
        std::uint64_t buffered_bytes = 0;
        std::uint64_t last_seq = 0;
        bool paused = false;  ///< the upstream is waiting for a resume
    };
    Counters counters() const;

    const Limits& limits() const { return limits_; }

private:
    struct Entry {
        std::uint64_t seq;
        std::string text;
    };
    void acknowledgeLocked(std::uint64_t seq);
    bool fitsLocked(std::size_t bytes) const;

    const Limits limits_;
    mutable std::mutex mutex_;
    std::deque<Entry> entries_;
    std::uint64_t bytes_ = 0;
    std::uint64_t last_seq_ = 0;
    Counters counters_;
    bool resume_due_ = false;
};

}  // namespace crank::runtime
