#include "http/next_request.h"

#include <poll.h>

#include <array>
#include <cerrno>
#include <optional>
#include <string>

#include "http/poll_until.h"
#include "http/request_head.h"
#include <sys/socket.h>

namespace crank::http {
namespace {

using Clock = std::chrono::steady_clock;

/// Reads per wait: each returns new bytes or ends the wait, so this bounds the loop, not the time.
constexpr int kMaxReads = 64;

}  // namespace

bool awaitNextRequest(ClientSocketImpl& client, const ConnectionGateOptions& options,
                      std::chrono::microseconds wait) {
    if (wait.count() <= 0 || client.readAheadSize() != client.readAhead().size()) {
        return false;  // read-ahead not at its start: left to the gate, which scans from there
    }
    client.endBody();
    std::string& buffer = client.readAhead();
    const Clock::time_point deadline = Clock::now() + wait;
    const std::size_t cap = options.max_head_bytes + options.read_ahead_body_bytes;
    std::size_t scanned = 0;
    std::optional<std::size_t> need;  // head and read-ahead body, once the head is in
    std::size_t head_bytes = 0;
    Clock::time_point head_end;
    for (int reads = 0;; ++reads) {
        if (!need && !buffer.empty()) {
            const RequestHead head = scanRequestHead(buffer, options.max_head_bytes, scanned);
            if (head.state == HeadState::incomplete) {
                scanned = buffer.size();
            } else if (head.state != HeadState::complete ||
                       (options.auth_failures &&
                        options.auth_failures->blockedForMs(client.peer()) > 0)) {
                return false;  // 400, 431, 501 or 429 (a throttled address): the gate answers
            } else {
                head_bytes = head.head_bytes;
                head_end = Clock::now();
                need = head.head_bytes + readAheadBodyBytes(head, options.read_ahead_body_bytes,
                                                            options.max_body_bytes);
            }
        }
        if (need && buffer.size() >= *need) {
            client.startBody(options.body, head_end, buffer.size() - head_bytes);
            return true;
        }
        if (reads >= kMaxReads || buffer.size() >= cap) {
            return false;
        }
        // Not zeroed: recv() writes what it reads, and the rest is never looked at.
        std::array<char, 16384> chunk;  // NOLINT(cppcoreguidelines-pro-type-member-init)
        const std::size_t room = std::min(chunk.size(), cap - buffer.size());
        // Read first, wait only when nothing is there: a parked worker comes here because the
        // connection is readable, so a poll first would be a system call spent on the known.
        ssize_t n = ::recv(client.sockfd(), chunk.data(), room, MSG_DONTWAIT);
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
            if (pollUntil(client.sockfd(), POLLIN, deadline) != 1) {
                return false;
            }
            n = ::recv(client.sockfd(), chunk.data(), room, MSG_DONTWAIT);
        }
        if (n <= 0) {
            // Closed, or an error: the gate sees it again and closes the connection; EAGAIN
            // (a spurious wake, or a hang-up without bytes) ends the fast path too.
            return false;
        }
        buffer.append(chunk.data(), static_cast<std::size_t>(n));
    }
}

}  // namespace crank::http
