#pragma once

// Helpers for the host/http tests: sockets with bounded reads, and a recorder of OnClosed calls.

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "http/stream_reactor.h"
#include "raw_socket.h"

namespace crank::http {

/// Prints a CloseReason by name in gtest messages.
inline void PrintTo(CloseReason reason, std::ostream* out) {
    *out << closeReasonName(reason);
}

}  // namespace crank::http

namespace crank::http::test {

using namespace std::chrono_literals;
using testing::connectLoopback;
using testing::Fd;
using testing::kWait;
using testing::readBytes;
using testing::readFor;
using testing::ReadResult;
using testing::readToEof;
using testing::readUntil;
using testing::SocketPair;
using testing::tcpPair;
using testing::unixPair;
using testing::writeAll;

/// Records OnClosed calls and lets a test wait for them.
class ClosedLog {
public:
    /// A callback that records into this log; the log must outlive the reactor's callbacks.
    StreamReactor::OnClosed callback();

    void record(StreamId id, CloseReason reason);
    /// The reason recorded for `id` (the first one), waiting at most `timeout`.
    std::optional<CloseReason> waitFor(StreamId id, std::chrono::milliseconds timeout = kWait);
    /// Waits until at least `count` calls are recorded; true if they were.
    bool waitForCount(std::size_t count, std::chrono::milliseconds timeout = kWait);
    /// How many calls were recorded for `id`.
    std::size_t countFor(StreamId id) const;
    std::vector<std::pair<StreamId, CloseReason>> all() const;

private:
    mutable std::mutex mutex_;
    std::condition_variable changed_;
    std::vector<std::pair<StreamId, CloseReason>> calls_;
};

}  // namespace crank::http::test
