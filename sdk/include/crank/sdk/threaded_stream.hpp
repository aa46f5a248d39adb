// Crank SDK, C++ layer: a stream whose reader is one blocking function on a thread of its own.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <string_view>
#include <thread>

#include "crank/sdk/boundary.hpp"
#include "crank/sdk/call.hpp"
#include "crank/sdk/stream.hpp"

namespace crank::sdk {

class ThreadedStream;

/// What ThreadedStream::run() gets: emit with the backpressure protocol handled, cancellation,
/// and cancellable sleeps. Used only from the run() thread (cancelled() and call() from any).
class StreamContext {
public:
    StreamContext(const StreamContext&) = delete;
    StreamContext& operator=(const StreamContext&) = delete;
    StreamContext(StreamContext&&) = delete;
    StreamContext& operator=(StreamContext&&) = delete;
    ~StreamContext() = default;

    /// Hands one item (a JSON value as text) to the host and follows its answer:
    ///  - accepted: returns true;
    ///  - accepted_pause: returns true; the NEXT emit() blocks until resume() or cancel();
    ///  - rejected_full: blocks until resume() or cancel(), then emits the same item again;
    ///  - cancelled (or cancel() came): returns false: stop reading and return from run() soon.
    bool emit(std::string_view json) {
        std::unique_lock<std::mutex> lock(mutex_);
        for (;;) {
            if (paused_) {
                cv_.wait(lock, [this] { return cancelled_ || resumes_ != pause_mark_; });
                paused_ = false;
            }
            if (cancelled_) {
                return false;
            }
            // A resume() that arrives while the host is answering must not be lost: remember how
            // many resumes had been seen before asking.
            const std::uint64_t mark = resumes_;
            lock.unlock();
            const EmitResult result = call_.emit(json);
            lock.lock();
            switch (result) {
                case EmitResult::accepted:
                    return true;
                case EmitResult::accepted_pause:
                    ++pauses_;
                    paused_ = true;
                    pause_mark_ = mark;
                    return true;
                case EmitResult::rejected_full:
                    ++rejections_;
                    paused_ = true;
                    pause_mark_ = mark;
                    break;  // wait, then emit the same item again
                case EmitResult::cancelled:
                    cancelled_ = true;
                    cv_.notify_all();
                    return false;
            }
        }
    }

    /// True once the stream was cancelled (cancel(), an emit answered cancelled, or the host
    /// flags the call as cancelled).
    bool cancelled() const noexcept {
        {
            std::lock_guard<std::mutex> lock(mutex_);
            if (cancelled_) {
                return true;
            }
        }
        return call_.handle() != nullptr && call_.isCancelled();
    }

    /// Sleeps `duration` (a poll interval, a fixture's pace). Returns false at once when the
    /// stream is cancelled meanwhile, true after a full sleep.
    bool waitFor(std::chrono::milliseconds duration) {
        std::unique_lock<std::mutex> lock(mutex_);
        return !cv_.wait_for(lock, duration, [this] { return cancelled_; });
    }

    /// The stream's call: progress, setCursor, log, setError. Do not call complete(): the layer
    /// does when run() returns.
    Call& call() noexcept { return call_; }

    /// How many times the host answered accepted_pause / rejected_full so far.
    std::uint64_t pauses() const {
        std::lock_guard<std::mutex> lock(mutex_);
        return pauses_;
    }
    std::uint64_t rejections() const {
        std::lock_guard<std::mutex> lock(mutex_);
        return rejections_;
    }

private:
    friend class ThreadedStream;
    StreamContext() = default;

    void resumed() {
        {
            std::lock_guard<std::mutex> lock(mutex_);
            ++resumes_;
        }
        cv_.notify_all();
    }
    void cancelNow() {
        {
            std::lock_guard<std::mutex> lock(mutex_);
            cancelled_ = true;
        }
        cv_.notify_all();
    }

    Call call_;
    mutable std::mutex mutex_;
    std::condition_variable cv_;
    bool cancelled_ = false;
    bool paused_ = false;
    std::uint64_t resumes_ = 0;
    std::uint64_t pause_mark_ = 0;
    std::uint64_t pauses_ = 0;
    std::uint64_t rejections_ = 0;
};

/// The easy way to write a blocking reader. Override run(); the layer starts it on a thread this
/// object owns right after openStream() returned the stream, and when run() returns it calls
/// complete() exactly once:
///  - run() returned: complete(ok), or complete(cancelled) if the stream was cancelled;
///  - run() threw Error (or anything): setError() + complete(error), or complete(cancelled)
///    without an error if the stream had been cancelled (a read failing because cancel() closed
///    the socket is not an error).
///
/// cancel() (from the host) wakes every wait of the StreamContext and then calls onCancel(),
/// where you can interrupt a blocking read (close the socket...). The destructor (stream_destroy,
/// after complete()) cancels and joins.
///
/// Copy what you need from the Request into members before openStream() returns: its views die
/// with the call to openStream().
class ThreadedStream : public Stream {
public:
    ThreadedStream() = default;
    ThreadedStream(const ThreadedStream&) = delete;
    ThreadedStream& operator=(const ThreadedStream&) = delete;
    ThreadedStream(ThreadedStream&&) = delete;
    ThreadedStream& operator=(ThreadedStream&&) = delete;
    /// Cancels and joins. If you destroy a started stream yourself before it completed, call
    /// stop() first in your own destructor (run() uses your members).
    ~ThreadedStream() override { stop(); }

    /// Starts run() on the stream's thread (the layer calls it; once).
    void start(Call call) final {
        ctx_.call_ = call;
        thread_ = std::thread([this] { body(); });
    }
    void resume() final { ctx_.resumed(); }
    void cancel() final {
        ctx_.cancelNow();
        onCancel();
    }

protected:
    /// The reader, on the stream's own thread: emit items with ctx.emit() until the upstream
    /// ends, emit() returns false, or ctx.cancelled(). Throw Error to fail the stream.
    virtual void run(StreamContext& ctx) = 0;

    /// Called by cancel() (on a host thread) after the context's waits were woken: interrupt a
    /// blocking read here. Must not block for long. May be called more than once.
    virtual void onCancel() {}

    /// Cancels the context and joins the thread (no-op when not started or already joined).
    void stop() noexcept {
        ctx_.cancelNow();
        if (!thread_.joinable()) {
            return;
        }
        if (thread_.get_id() == std::this_thread::get_id()) {
            // Destroyed from inside complete() on our own thread: nothing of ours runs after it.
            thread_.detach();
        } else {
            thread_.join();
        }
    }

private:
    void body() noexcept {
        Status status = Status::ok;
        try {
            run(ctx_);
            status = ctx_.cancelled() ? Status::cancelled : Status::ok;
        } catch (...) {
            if (ctx_.cancelled()) {
                status = Status::cancelled;
            } else {
                detail::setErrorFromCurrentException(ctx_.call_.api(), ctx_.call_.handle());
                status = Status::error;
            }
        }
        // After complete() the host may destroy this object at once: touch nothing of it.
        Call call = ctx_.call_;
        call.complete(status);
    }

    StreamContext ctx_;
    std::thread thread_;
};

}  // namespace crank::sdk
