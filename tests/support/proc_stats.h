#pragma once

// What a test can read of a running process from /proc: open descriptors and threads, to check
// that work which ended left nothing behind.

#include <cstdint>
#include <filesystem>
#include <string>
#include <system_error>

#include <sys/types.h>

namespace crank::testing {

/// Entries of /proc/PID/`what` ("fd": open descriptors, "task": threads); -1 when unreadable.
inline std::int64_t procEntries(pid_t pid, const char* what) {
    std::error_code ec;
    std::int64_t n = 0;
    for (std::filesystem::directory_iterator it("/proc/" + std::to_string(pid) + "/" + what, ec),
         end;
         !ec && it != end; it.increment(ec)) {
        ++n;
    }
    return ec ? -1 : n;
}

/// Open descriptors of `pid`.
inline std::int64_t openFds(pid_t pid) {
    return procEntries(pid, "fd");
}

/// Threads of `pid`.
inline std::int64_t threadCount(pid_t pid) {
    return procEntries(pid, "task");
}

}  // namespace crank::testing
