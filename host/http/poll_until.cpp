#include "http/poll_until.h"

#include <poll.h>

#include <cerrno>
#include <ctime>

namespace crank::http {

int pollUntil(int fd, short events, std::chrono::steady_clock::time_point deadline) {
    for (;;) {
        const auto left = std::chrono::duration_cast<std::chrono::nanoseconds>(
            deadline - std::chrono::steady_clock::now());
        const long long ns = left.count() > 0 ? left.count() : 0;
        timespec timeout{static_cast<time_t>(ns / 1'000'000'000),
                         static_cast<long>(ns % 1'000'000'000)};
        pollfd p{fd, events, 0};
        const int rc = ::ppoll(&p, 1, &timeout, nullptr);
        if (rc >= 0) {
            return rc > 0 ? 1 : 0;
        }
        if (errno != EINTR) {
            return -1;
        }
    }
}

}  // namespace crank::http
