#pragma once

// What a test can read of running processes from /proc: open descriptors and threads, and the
// processes that carry a marker, to check that work which ended left nothing behind.

#include <cstdint>
#include <filesystem>
#include <fstream>
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

/// Processes on the machine whose command line carries `mark` (a test gives the processes it
/// starts a marker argument of its own); -1 when /proc cannot be read.
inline int processesWith(const std::string& mark) {
    std::error_code ec;
    int count = 0;
    for (std::filesystem::directory_iterator it("/proc", ec), end; !ec && it != end;
         it.increment(ec)) {
        const std::string pid = it->path().filename().string();
        if (pid.empty() || pid.find_first_not_of("0123456789") != std::string::npos) {
            continue;
        }
        std::ifstream in(it->path() / "cmdline", std::ios::binary);
        std::string cmdline(4096, '\0');
        in.read(cmdline.data(), static_cast<std::streamsize>(cmdline.size()));
        cmdline.resize(static_cast<std::size_t>(in.gcount()));
        count += cmdline.find(mark) != std::string::npos ? 1 : 0;
    }
    return ec ? -1 : count;
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
