#pragma once

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
    /// Waits up to `grace_ms` for the remaining streams, destroys those that completed, and leaks
    /// (logs) the others.
    ~StreamReaper();
    StreamReaper(const StreamReaper&) = delete;
    StreamReaper& operator=(const StreamReaper&) = delete;

    void adopt(std::shared_ptr<WindowCollector> call, const plugins::AdapterHandle& adapter,
               crank_stream* stream);
    std::size_t pending() const;

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
    std::thread thread_;
};

}  // namespace crank::runtime
