#include "http/stream_reactor.h"

#include <errno.h>
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <climits>
#include <mutex>
#include <optional>
#include <system_error>
#include <thread>
#include <unordered_map>
#include <utility>
#include <vector>

#include "http/sse_event.h"
#include "log/log.h"
#include <pthread.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>

namespace crank::http {
namespace {

using Clock = std::chrono::steady_clock;

constexpr int kMaxEventsPerWait = 256;
// Bytes a client sends are read and dropped; at most this much per stream and wakeup, so that one
// chatty client cannot keep the loop from the others.
constexpr std::size_t kMaxDiscardPerWakeup = std::size_t{64} * 1024;
constexpr std::size_t kDiscardChunk = 4096;
// A drained write buffer keeps at most this much capacity, so that idle streams stay small.
constexpr std::size_t kKeptCapacity = 4096;
// The timer pass (heartbeats, stalls) runs every quarter of the shortest interval, within these.
constexpr std::chrono::milliseconds kMinTick{5};
constexpr std::chrono::milliseconds kMaxTick{1000};

std::string errnoText(int err) {
    return std::generic_category().message(err);
}

/// One adopted connection. The fields under "guarded" belong to StreamReactor::Impl::mutex; the
/// ones under "reactor thread" are only touched by the reactor thread (and by adopt() before the
/// stream is published).
struct Stream {
    Stream(StreamId streamId, int socket, StreamReactor::OnClosed callback, Clock::time_point now)
        : id(streamId), fd(socket), onClosed(std::move(callback)), lastActivity(now) {}

    const StreamId id;
    const int fd;
    StreamReactor::OnClosed onClosed;

    // Guarded.
    std::string queued;  // sent, not yet picked up by the reactor thread
    bool dirty = false;  // listed in Impl::dirty
    bool closing = false;
    CloseReason closingReason = CloseReason::closed_by_server;
    bool overflowed = false;

    // Bytes of `out` the kernel has not taken: written by the reactor thread, read by send().
    std::atomic<std::size_t> unsent{0};

    // Reactor thread.
    std::string out;
    std::size_t outOffset = 0;
    Clock::time_point lastActivity;  // last write progress, or when bytes started waiting
    std::optional<CloseReason> closeWhenFlushed;
    std::optional<CloseReason> ended;
    bool wantsWrite = false;  // EPOLLOUT registered
    bool scheduled = false;   // in Impl::toFlush
    bool ending = false;      // in Impl::toEnd

    bool hasUnsent() const { return outOffset < out.size(); }
};

std::optional<Clock::duration> timerTick(const StreamReactorOptions& options) {
    std::int64_t shortest = 0;
    for (const std::int64_t ms : {options.heartbeat_interval_ms, options.stall_timeout_ms}) {
        if (ms > 0 && (shortest == 0 || ms < shortest)) {
            shortest = ms;
        }
    }
    if (shortest == 0) {
        return std::nullopt;
    }
    return std::clamp(std::chrono::milliseconds(shortest / 4), kMinTick, kMaxTick);
}

}  // namespace

std::string_view closeReasonName(CloseReason reason) {
    switch (reason) {
        case CloseReason::closed_by_server:
            return "closed_by_server";
        case CloseReason::peer_closed:
            return "peer_closed";
        case CloseReason::overflow:
            return "overflow";
        case CloseReason::write_error:
            return "write_error";
        case CloseReason::shutdown:
            return "shutdown";
    }
    return "unknown";
}

struct StreamReactor::Impl {
    enum class State { idle, running, stopping, stopped };

    explicit Impl(Options o) : options(o), tick(timerTick(o)) {}

    const Options options;
    const std::optional<Clock::duration> tick;
    const std::string heartbeat = formatSseComment("ping");
    int epollFd = -1;
    int wakeFd = -1;
    std::thread thread;
    std::atomic<std::thread::id> reactorThread{};
    std::mutex joinMutex;

    mutable std::mutex mutex;
    State state = State::idle;                                      // guarded
    Clock::time_point deadline;                                     // guarded, when stopping
    StreamId nextId = 1;                                            // guarded
    std::unordered_map<StreamId, std::unique_ptr<Stream>> streams;  // guarded
    std::vector<StreamId> dirty;                                    // guarded

    // Reactor thread: work lists of one loop iteration.
    std::vector<Stream*> toFlush;
    std::vector<Stream*> toEnd;
    std::vector<Stream*> beats;
    std::vector<std::pair<StreamId, std::size_t>> stalled;  // id, bytes waiting

    /// Lists `s` for the reactor thread. Call under the lock; true when the thread needs a wake.
    bool markDirty(Stream& s) {
        if (s.dirty) {
            return false;
        }
        s.dirty = true;
        dirty.push_back(s.id);
        return dirty.size() == 1;  // otherwise a wake is already pending
    }

    void wake() const {
        const std::uint64_t one = 1;
        // EAGAIN means the counter is saturated: the loop is woken anyway.
        [[maybe_unused]] const ssize_t written = ::write(wakeFd, &one, sizeof one);
    }

    void run();
    void handleEvent(const epoll_event& event);
    void discardInput(Stream& s);
    void collectWork(Clock::time_point now, bool& stopping, Clock::time_point& stopDeadline);
    void flush(Stream& s, Clock::time_point now);
    void setWantsWrite(Stream& s, bool want);
    void timerPass(Clock::time_point now);
    void cutOffAll(CloseReason reason);
    void endStreams();
    void closeDescriptor(Stream& s) const;

    void schedule(Stream& s) {
        if (!s.scheduled) {
            s.scheduled = true;
            toFlush.push_back(&s);
        }
    }
    void markEnded(Stream& s, CloseReason reason) {
        if (!s.ended) {
            s.ended = reason;
        }
        if (!s.ending) {
            s.ending = true;
            toEnd.push_back(&s);
        }
    }
};

void StreamReactor::Impl::run() {
    reactorThread = std::this_thread::get_id();
    pthread_setname_np(pthread_self(), "crank-sse");
    std::array<epoll_event, kMaxEventsPerWait> events{};
    bool stopping = false;
    Clock::time_point stopDeadline;
    Clock::time_point nextTimer = Clock::now() + tick.value_or(Clock::duration::zero());
    while (true) {
        Clock::time_point now = Clock::now();
        std::optional<Clock::time_point> wakeAt;
        if (tick) {
            wakeAt = nextTimer;
        }
        if (stopping) {
            wakeAt = wakeAt ? std::min(*wakeAt, stopDeadline) : stopDeadline;
        }
        int timeoutMs = -1;
        if (wakeAt) {
            const auto ms = std::chrono::ceil<std::chrono::milliseconds>(*wakeAt - now).count();
            timeoutMs = static_cast<int>(std::clamp<std::int64_t>(ms, 0, INT_MAX));
        }
        const int n = ::epoll_wait(epollFd, events.data(), kMaxEventsPerWait, timeoutMs);
        if (n < 0 && errno != EINTR) {
            const int err = errno;
            log::error("SSE stream reactor: epoll_wait failed ({}); closing every stream",
                       errnoText(err));
            {
                std::lock_guard lock(mutex);
                state = State::stopping;  // refuse adopts from now on
            }
            cutOffAll(CloseReason::write_error);
            endStreams();
            return;
        }
        now = Clock::now();
        for (int i = 0; i < n; ++i) {
            handleEvent(events[static_cast<std::size_t>(i)]);
        }
        collectWork(now, stopping, stopDeadline);
        for (Stream* s : toFlush) {
            s->scheduled = false;
            if (s->ended) {
                continue;
            }
            flush(*s, now);
            if (!s->ended && s->closeWhenFlushed && !s->hasUnsent()) {
                markEnded(*s, *s->closeWhenFlushed);
            }
        }
        toFlush.clear();
        if (tick && now >= nextTimer) {
            timerPass(now);
            nextTimer = now + *tick;
        }
        if (stopping && now >= stopDeadline) {
            cutOffAll(CloseReason::shutdown);
        }
        endStreams();
        if (stopping) {
            std::lock_guard lock(mutex);
            if (streams.empty()) {
                return;
            }
        }
    }
}

void StreamReactor::Impl::handleEvent(const epoll_event& event) {
    if (event.data.ptr == nullptr) {  // the eventfd: work was posted
        std::uint64_t count = 0;
        [[maybe_unused]] const ssize_t got = ::read(wakeFd, &count, sizeof count);
        return;
    }
    auto* s = static_cast<Stream*>(event.data.ptr);
    if (s->ended) {
        return;
    }
    if ((event.events & EPOLLIN) != 0) {
        discardInput(*s);
    }
    if ((event.events & (EPOLLRDHUP | EPOLLHUP | EPOLLERR)) != 0) {
        markEnded(*s, CloseReason::peer_closed);
    }
    if ((event.events & EPOLLOUT) != 0 && !s->ended) {
        schedule(*s);
    }
}

void StreamReactor::Impl::discardInput(Stream& s) {
    std::array<char, kDiscardChunk> buffer{};
    std::size_t total = 0;
    while (total < kMaxDiscardPerWakeup) {
        const ssize_t got = ::recv(s.fd, buffer.data(), buffer.size(), MSG_DONTWAIT);
        if (got > 0) {
            total += static_cast<std::size_t>(got);
            continue;
        }
        if (got < 0 && errno == EINTR) {
            continue;
        }
        if (got < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
            return;
        }
        markEnded(s, CloseReason::peer_closed);  // EOF, or reset
        return;
    }
}

void StreamReactor::Impl::collectWork(Clock::time_point now, bool& stopping,
                                      Clock::time_point& stopDeadline) {
    std::lock_guard lock(mutex);
    stopping = state == State::stopping;
    stopDeadline = deadline;
    for (const StreamId id : dirty) {
        const auto it = streams.find(id);
        if (it == streams.end()) {
            continue;  // ended since it was listed
        }
        Stream& s = *it->second;
        s.dirty = false;
        if (s.ended) {
            continue;
        }
        if (s.overflowed) {
            s.queued.clear();
            markEnded(s, CloseReason::overflow);
            continue;
        }
        if (!s.queued.empty()) {
            if (!s.hasUnsent()) {
                s.out.clear();
                s.outOffset = 0;
                s.out.swap(s.queued);
                s.lastActivity = now;  // a stall is counted from when bytes start waiting
            } else {
                s.out.erase(0, s.outOffset);
                s.outOffset = 0;
                s.out.append(s.queued);
            }
            s.queued.clear();
            s.unsent.store(s.out.size(), std::memory_order_relaxed);
        }
        if (s.closing && !s.closeWhenFlushed) {
            s.closeWhenFlushed = s.closingReason;
        }
        schedule(s);
    }
    dirty.clear();
}

void StreamReactor::Impl::flush(Stream& s, Clock::time_point now) {
    while (s.hasUnsent()) {
        const ssize_t sent = ::send(s.fd, s.out.data() + s.outOffset, s.out.size() - s.outOffset,
                                    MSG_NOSIGNAL | MSG_DONTWAIT);
        if (sent > 0) {
            s.outOffset += static_cast<std::size_t>(sent);
            s.lastActivity = now;
            continue;
        }
        const int err = sent < 0 ? errno : EIO;
        if (err == EINTR) {
            continue;
        }
        if (err == EAGAIN || err == EWOULDBLOCK) {
            break;
        }
        if (err == EPIPE || err == ECONNRESET || err == ENOTCONN) {
            markEnded(s, CloseReason::peer_closed);
        } else {
            log::warn("SSE stream {}: write failed: {}", s.id, errnoText(err));
            markEnded(s, CloseReason::write_error);
        }
        return;
    }
    if (!s.hasUnsent()) {
        s.out.clear();
        s.outOffset = 0;
        if (s.out.capacity() > kKeptCapacity) {
            std::string().swap(s.out);
        }
    }
    s.unsent.store(s.out.size() - s.outOffset, std::memory_order_relaxed);
    setWantsWrite(s, s.hasUnsent());
}

void StreamReactor::Impl::setWantsWrite(Stream& s, bool want) {
    if (s.wantsWrite == want) {
        return;
    }
    epoll_event event{};
    event.events = EPOLLIN | EPOLLRDHUP | (want ? EPOLLOUT : 0U);
    event.data.ptr = &s;
    if (::epoll_ctl(epollFd, EPOLL_CTL_MOD, s.fd, &event) != 0) {
        const int err = errno;
        log::warn("SSE stream {}: cannot watch the socket: {}", s.id, errnoText(err));
        markEnded(s, CloseReason::write_error);
        return;
    }
    s.wantsWrite = want;
}

void StreamReactor::Impl::timerPass(Clock::time_point now) {
    const auto heartbeatAfter = std::chrono::milliseconds(options.heartbeat_interval_ms);
    const auto stallAfter = std::chrono::milliseconds(options.stall_timeout_ms);
    {
        std::lock_guard lock(mutex);
        for (auto& [id, stream] : streams) {
            Stream& s = *stream;
            if (s.ended) {
                continue;
            }
            if (s.hasUnsent()) {
                if (options.stall_timeout_ms > 0 && now - s.lastActivity >= stallAfter) {
                    stalled.emplace_back(id, s.out.size() - s.outOffset);
                    markEnded(s, CloseReason::overflow);
                }
            } else if (options.heartbeat_interval_ms > 0 && s.queued.empty() && !s.closing &&
                       now - s.lastActivity >= heartbeatAfter) {
                s.out.assign(heartbeat);
                s.outOffset = 0;
                s.unsent.store(s.out.size(), std::memory_order_relaxed);
                s.lastActivity = now;
                beats.push_back(&s);
            }
        }
    }
    for (Stream* s : beats) {
        flush(*s, now);
    }
    beats.clear();
    for (const auto& [id, waiting] : stalled) {
        log::warn(
            "SSE stream {}: the client took none of {} waiting bytes for {} ms "
            "(stall_timeout_ms); disconnecting it",
            id, waiting, options.stall_timeout_ms);
    }
    stalled.clear();
}

void StreamReactor::Impl::cutOffAll(CloseReason reason) {
    std::lock_guard lock(mutex);
    for (auto& [id, stream] : streams) {
        markEnded(*stream, reason);
    }
}

void StreamReactor::Impl::endStreams() {
    if (toEnd.empty()) {
        return;
    }
    std::vector<std::unique_ptr<Stream>> gone;
    gone.reserve(toEnd.size());
    {
        // Unpublished first: from here on send() and close() no longer find these streams.
        std::lock_guard lock(mutex);
        for (Stream* s : toEnd) {
            const auto it = streams.find(s->id);
            gone.push_back(std::move(it->second));
            streams.erase(it);
        }
    }
    toEnd.clear();
    for (const auto& s : gone) {
        closeDescriptor(*s);
    }
    for (const auto& s : gone) {
        const CloseReason reason = s->ended.value_or(CloseReason::write_error);
        log::debug("SSE stream {} closed: {}", s->id, closeReasonName(reason));
        if (!s->onClosed) {
            continue;
        }
        try {
            s->onClosed(s->id, reason);
        } catch (const std::exception& e) {
            log::error("SSE stream {}: OnClosed callback threw: {}", s->id, e.what());
        } catch (...) {
            log::error("SSE stream {}: OnClosed callback threw a non-standard exception", s->id);
        }
    }
}

void StreamReactor::Impl::closeDescriptor(Stream& s) const {
    ::epoll_ctl(epollFd, EPOLL_CTL_DEL, s.fd, nullptr);
    if (s.ended == CloseReason::overflow) {
        // The client is not reading: reset the connection rather than leave the kernel holding
        // its unread bytes for an orphaned socket.
        const linger abortive{1, 0};
        ::setsockopt(s.fd, SOL_SOCKET, SO_LINGER, &abortive, sizeof abortive);
    } else if (s.ended != CloseReason::peer_closed) {
        // FIN after what the kernel still holds. Unread client bytes would turn close() into a
        // reset that can destroy data in flight to the client, so drop what is there first.
        ::shutdown(s.fd, SHUT_WR);
        std::array<char, kDiscardChunk> buffer{};
        for (std::size_t total = 0; total < kMaxDiscardPerWakeup;) {
            const ssize_t got = ::recv(s.fd, buffer.data(), buffer.size(), MSG_DONTWAIT);
            if (got <= 0) {
                break;
            }
            total += static_cast<std::size_t>(got);
        }
    }
    ::close(s.fd);
}

StreamReactor::StreamReactor() : StreamReactor(Options{}) {}

StreamReactor::StreamReactor(Options options) : impl_(std::make_unique<Impl>(options)) {}

StreamReactor::~StreamReactor() {
    shutdown(std::chrono::milliseconds(0));
    if (impl_->epollFd >= 0) {
        ::close(impl_->epollFd);
    }
    if (impl_->wakeFd >= 0) {
        ::close(impl_->wakeFd);
    }
}

Result<void> StreamReactor::start() {
    const Options& o = impl_->options;
    if (o.max_buffered_bytes == 0 || o.max_streams == 0 || o.heartbeat_interval_ms < 0 ||
        o.stall_timeout_ms < 0) {
        return Error{ErrorCode::invalid_argument,
                     "stream reactor: max_buffered_bytes and max_streams must be positive, "
                     "heartbeat_interval_ms and stall_timeout_ms zero (off) or positive"};
    }
    std::lock_guard lock(impl_->mutex);
    if (impl_->state != Impl::State::idle) {
        return Error{ErrorCode::conflict, "stream reactor: start() was already called"};
    }
    // On failure everything made so far is released, so that start() can be tried again.
    const auto fail = [this](const std::string& what, const std::string& why) -> Error {
        for (int* fd : {&impl_->epollFd, &impl_->wakeFd}) {
            if (*fd >= 0) {
                ::close(*fd);
                *fd = -1;
            }
        }
        return Error{ErrorCode::io, "stream reactor: cannot " + what + ": " + why};
    };
    impl_->epollFd = ::epoll_create1(EPOLL_CLOEXEC);
    if (impl_->epollFd < 0) {
        const int err = errno;
        return fail("create an epoll set", errnoText(err));
    }
    impl_->wakeFd = ::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    if (impl_->wakeFd < 0) {
        const int err = errno;
        return fail("create an eventfd", errnoText(err));
    }
    epoll_event event{};
    event.events = EPOLLIN;
    event.data.ptr = nullptr;  // marks the eventfd among the streams
    if (::epoll_ctl(impl_->epollFd, EPOLL_CTL_ADD, impl_->wakeFd, &event) != 0) {
        const int err = errno;
        return fail("watch its eventfd", errnoText(err));
    }
    try {
        impl_->thread = std::thread([impl = impl_.get()] { impl->run(); });
    } catch (const std::system_error& e) {
        return fail("start its thread", e.what());
    }
    impl_->state = Impl::State::running;
    return {};
}

Result<StreamId> StreamReactor::adopt(int fd, OnClosed onClosed) {
    if (fd < 0) {
        return Error{
            ErrorCode::invalid_argument,
            "stream reactor: adopt() needs an open socket, got descriptor " + std::to_string(fd)};
    }
    int type = 0;
    socklen_t typeSize = sizeof type;
    if (::getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &typeSize) != 0 || type != SOCK_STREAM) {
        ::close(fd);
        return Error{ErrorCode::invalid_argument,
                     "stream reactor: adopt() needs a connected stream socket; descriptor " +
                         std::to_string(fd) + " is not one"};
    }
    const int flags = ::fcntl(fd, F_GETFL);
    if (flags < 0 || ::fcntl(fd, F_SETFL, flags | O_NONBLOCK) != 0) {
        const int err = errno;
        ::close(fd);
        return Error{ErrorCode::io,
                     "stream reactor: cannot make the socket non-blocking: " + errnoText(err)};
    }
    std::optional<Error> refused;
    StreamId id = 0;
    {
        std::lock_guard lock(impl_->mutex);
        if (impl_->state != Impl::State::running) {
            refused = Error{ErrorCode::unavailable,
                            impl_->state == Impl::State::idle
                                ? "stream reactor: not started (call start() first)"
                                : "stream reactor: shutting down, no new streams"};
        } else if (impl_->streams.size() >= impl_->options.max_streams) {
            refused = Error{ErrorCode::unavailable,
                            "too many open SSE streams: max_streams (" +
                                std::to_string(impl_->options.max_streams) +
                                ") reached; raise the limit or let clients close streams"};
        } else {
            id = impl_->nextId++;
            auto stream = std::make_unique<Stream>(id, fd, std::move(onClosed), Clock::now());
            epoll_event event{};
            event.events = EPOLLIN | EPOLLRDHUP;
            event.data.ptr = stream.get();
            // Registered under the lock, so that a shutdown cannot close the stream (and free its
            // descriptor number for reuse) before it is in the epoll set.
            if (::epoll_ctl(impl_->epollFd, EPOLL_CTL_ADD, fd, &event) != 0) {
                const int err = errno;
                refused = Error{ErrorCode::io,
                                "stream reactor: cannot watch the socket: " + errnoText(err)};
            } else {
                impl_->streams.emplace(id, std::move(stream));
            }
        }
    }
    if (refused) {
        ::close(fd);
        return std::move(*refused);
    }
    return id;
}

bool StreamReactor::send(StreamId id, std::string bytes) {
    bool queued = false;
    std::size_t waiting = 0;
    const std::size_t offered = bytes.size();
    bool wakeNeeded = false;
    {
        std::lock_guard lock(impl_->mutex);
        const auto it = impl_->streams.find(id);
        if (it == impl_->streams.end()) {
            return false;
        }
        Stream& s = *it->second;
        if (s.closing || s.overflowed) {
            return false;
        }
        if (bytes.empty()) {
            return true;
        }
        waiting = s.queued.size() + s.unsent.load(std::memory_order_relaxed);
        if (waiting + offered > impl_->options.max_buffered_bytes) {
            s.overflowed = true;
        } else if (s.queued.empty()) {
            s.queued = std::move(bytes);
            queued = true;
        } else {
            s.queued.append(bytes);
            queued = true;
        }
        wakeNeeded = impl_->markDirty(s);
    }
    if (wakeNeeded) {
        impl_->wake();
    }
    if (!queued) {
        log::warn(
            "SSE stream {}: the client is not keeping up ({} bytes waiting, {} more sent, "
            "max_buffered_bytes {}); disconnecting it",
            id, waiting, offered, impl_->options.max_buffered_bytes);
    }
    return queued;
}

void StreamReactor::close(StreamId id) {
    bool wakeNeeded = false;
    {
        std::lock_guard lock(impl_->mutex);
        const auto it = impl_->streams.find(id);
        if (it == impl_->streams.end() || it->second->closing) {
            return;
        }
        it->second->closing = true;
        it->second->closingReason = CloseReason::closed_by_server;
        wakeNeeded = impl_->markDirty(*it->second);
    }
    if (wakeNeeded) {
        impl_->wake();
    }
}

std::size_t StreamReactor::openStreams() const {
    std::lock_guard lock(impl_->mutex);
    return impl_->streams.size();
}

void StreamReactor::shutdown(std::chrono::milliseconds grace) {
    {
        std::lock_guard lock(impl_->mutex);
        const auto deadline = Clock::now() + grace;
        switch (impl_->state) {
            case Impl::State::idle:
                impl_->state = Impl::State::stopped;
                return;
            case Impl::State::stopped:
                return;
            case Impl::State::running:
                impl_->state = Impl::State::stopping;
                impl_->deadline = deadline;
                for (auto& [id, stream] : impl_->streams) {
                    if (!stream->closing) {
                        stream->closing = true;
                        stream->closingReason = CloseReason::shutdown;
                    }
                    impl_->markDirty(*stream);
                }
                break;
            case Impl::State::stopping:
                impl_->deadline = std::min(impl_->deadline, deadline);
                break;
        }
    }
    impl_->wake();
    if (std::this_thread::get_id() == impl_->reactorThread.load()) {
        log::error(
            "StreamReactor::shutdown() called from an OnClosed callback: streams are closing, "
            "but it cannot wait for its own thread");
        return;
    }
    std::lock_guard join(impl_->joinMutex);
    if (impl_->thread.joinable()) {
        impl_->thread.join();
    }
    std::lock_guard lock(impl_->mutex);
    impl_->state = Impl::State::stopped;
}

}  // namespace crank::http
