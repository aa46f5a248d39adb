#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <thread>

namespace crank::util {

/// Hands the C library's free heap back to the operating system every `interval`: glibc's
/// malloc_trim(0), which releases the free pages of every arena, not only the top of the main one.
/// glibc otherwise keeps what a burst took (up to one arena per thread, 8 per core) for ever: in
/// the soak benchmark, 190 sessions at once left crankd's RSS at 68 MiB with 4 MiB of heap in use
/// (bench/README.md, "Soak"). Where there is no glibc, the default trim does nothing.
///
/// THREADING: start() and stop() from one thread; trims() from any.
class MemoryTrimmer {
public:
    using Trim = std::function<void()>;

    /// `interval` 0: start() does nothing (server.memory_trim_interval_ms = 0).
    explicit MemoryTrimmer(std::chrono::milliseconds interval, Trim trim = systemTrim());
    ~MemoryTrimmer();
    MemoryTrimmer(const MemoryTrimmer&) = delete;
    MemoryTrimmer& operator=(const MemoryTrimmer&) = delete;

    /// Starts the thread that trims, the first time one interval from now.
    void start();
    /// Stops and joins it at once (a trim under way finishes first). Also done by the destructor.
    void stop();
    /// Trims done so far.
    std::uint64_t trims() const { return trims_.load(); }

    /// malloc_trim(0) with glibc, nothing elsewhere.
    static Trim systemTrim();

private:
    void run();

    const std::chrono::milliseconds interval_;
    const Trim trim_;
    std::atomic<std::uint64_t> trims_{0};
    std::mutex mutex_;
    std::condition_variable wake_;
    bool stopping_ = false;
    std::thread thread_;
};

}  // namespace crank::util
