#pragma once

#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include <crank/plugin.h>

namespace crank::plugins {
class AdapterHandle;
}  // namespace crank::plugins

namespace crank::runtime {

class WindowCollector;

/// Streams whose plugin did not acknowledge a cancel within the grace period. The window has
/// returned its result; the reaper keeps the call alive until the plugin calls complete(), then
/// destroys the stream (stream_destroy joins the plugin's threads, so it must not run on them).
/// At most `capacity` streams wait; past that a stream is leaked (and logged): a plugin that
/// never completes must not grow crankd without bound.
class StreamReaper {
public:
    explicit StreamReaper(std::size_t capacity = 1024);
    /// shutdown() with a grace of 2 s, unless it ran already.
    ~StreamReaper();
    StreamReaper(const StreamReaper&) = delete;
    StreamReaper& operator=(const StreamReaper&) = delete;

    void adopt(std::shared_ptr<WindowCollector> call, const plugins::AdapterHandle& adapter,
               crank_stream* stream);
    std::size_t pending() const;

    /// Stops the reaper: waits up to `grace` for the streams still waiting, destroys those that
    /// completed, and abandons the others (their calls stay allocated for ever: the plugin may
    /// still call into them). Returns how many streams were abandoned, including those leaked
    /// earlier past the capacity. Their plugin libraries must stay loaded.
    std::size_t shutdown(std::chrono::milliseconds grace);

private:
    struct Entry {
        std::shared_ptr<WindowCollector> call;
        const plugins::AdapterHandle* adapter;
        crank_stream* stream;
    };
    void run();
    void reapCompleted(std::vector<Entry>& entries);

    std::size_t capacity_;
    mutable std::mutex mutex_;
    std::condition_variable wake_;
    std::vector<Entry> entries_;
    bool stopping_ = false;
    bool shut_down_ = false;
    std::size_t abandoned_ = 0;
    std::thread thread_;
};

}  // namespace crank::runtime
