#pragma once

// poll(2) on one descriptor until an event or a deadline, at the clock's precision (ppoll), retried
// on EINTR: the one wait of the HTTP layer's own socket code (ClientSocketImpl, the keep-alive
// fast path).

#include <poll.h>

#include <chrono>
#include <span>

namespace crank::http {

/// 1 when `fd` has one of `events` (or an error or hang-up), 0 when `deadline` passed first, -1
/// with errno for an error of the call itself.
int pollUntil(int fd, short events, std::chrono::steady_clock::time_point deadline);

/// The same on several descriptors: the number with events (their `revents` set), 0 when
/// `deadline` passed first, -1 with errno for an error of the call itself.
int pollUntil(std::span<pollfd> fds, std::chrono::steady_clock::time_point deadline);

}  // namespace crank::http
