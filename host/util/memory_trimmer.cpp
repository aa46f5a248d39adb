#include "util/memory_trimmer.h"

#include <utility>

#if defined(__GLIBC__)
#include <malloc.h>
#endif

namespace crank::util {

MemoryTrimmer::MemoryTrimmer(std::chrono::milliseconds interval, Trim trim)
    : interval_(interval), trim_(std::move(trim)) {}

MemoryTrimmer::~MemoryTrimmer() {
    stop();
}

void MemoryTrimmer::start() {
    if (interval_.count() <= 0 || thread_.joinable()) {
        return;
    }
    {
        std::lock_guard lock(mutex_);
        stopping_ = false;
    }
    thread_ = std::thread([this] { run(); });
}

void MemoryTrimmer::stop() {
    {
        std::lock_guard lock(mutex_);
        stopping_ = true;
    }
    wake_.notify_all();
    if (thread_.joinable()) {
        thread_.join();
    }
}

void MemoryTrimmer::run() {
    std::unique_lock lock(mutex_);
    while (!wake_.wait_for(lock, interval_, [this] { return stopping_; })) {
        lock.unlock();
        trim_();
        trims_.fetch_add(1);
        lock.lock();
    }
}

MemoryTrimmer::Trim MemoryTrimmer::systemTrim() {
#if defined(__GLIBC__)
    return [] { malloc_trim(0); };
#else
    return [] {};
#endif
}

}  // namespace crank::util
