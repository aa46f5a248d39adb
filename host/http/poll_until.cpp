#include "http/poll_until.h"

#include <poll.h>

#include <cerrno>
#include <ctime>

namespace crank::http {

int pollUntil(std::span<pollfd> fds, std::chrono::steady_clock::time_point deadline) {
    for (;;) {
        const auto left = std::chrono::duration_cast<std::chrono::nanoseconds>(
            deadline - std::chrono::steady_clock::now());
        const long long ns = left.count() > 0 ? left.count() : 0;
        timespec timeout{static_cast<time_t>(ns / 1'000'000'000),
                         static_cast<long>(ns % 1'000'000'000)};
        const int rc = ::ppoll(fds.data(), fds.size(), &timeout, nullptr);
        if (rc >= 0 || errno != EINTR) {
            return rc;
        }
    }
}

int pollUntil(int fd, short events, std::chrono::steady_clock::time_point deadline) {
    pollfd p{fd, events, 0};
    const int rc = pollUntil(std::span<pollfd>(&p, 1), deadline);
    return rc > 0 ? 1 : rc;
}

}  // namespace crank::http
