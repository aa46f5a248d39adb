#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "util/error.h"

namespace crank::http {

/// Names one stream of a StreamReactor. Ids start at 1 and are never reused by that reactor.
using StreamId = std::uint64_t;

/// Why a stream ended; each stream reports exactly one.
enum class CloseReason {
    closed_by_server,  ///< close() was called and everything queued before it was written
    peer_closed,       ///< the client closed, half-closed or reset the connection
    overflow,          ///< the client did not keep up: more than max_buffered_bytes waiting, or
                       ///< none of the waiting bytes taken for stall_timeout_ms
    write_error,       ///< writing failed for a reason other than the client leaving
    shutdown,          ///< shutdown() (or the destructor) ended it
};

/// "closed_by_server", "peer_closed", "overflow", "write_error", "shutdown".
std::string_view closeReasonName(CloseReason reason);

/// Limits of a StreamReactor. Every limit is per reactor unless it says per stream.
struct StreamReactorOptions {
    /// A stream that has written nothing for this long gets an SSE comment (": ping"), so that
    /// proxies and clients do not time it out. 0 turns heartbeats off.
    std::int64_t heartbeat_interval_ms = 15000;
    /// Per stream: the most bytes Crank holds that the kernel has not yet taken. A send() that
    /// would go over it disconnects the stream with CloseReason::overflow. It must be larger than
    /// the largest single message (SSE event) sent on a stream.
    std::size_t max_buffered_bytes = std::size_t{1} << 20;
    /// Per stream: bytes are waiting but the client has taken none of them for this long: the
    /// stream is disconnected with CloseReason::overflow. This also bounds how long close() waits
    /// for a client that stopped reading. 0 turns it off.
    std::int64_t stall_timeout_ms = 60000;
    /// Open streams at most; adopt() refuses more.
    std::size_t max_streams = 10000;
};

/// Holds many long-lived SSE connections on one thread (epoll), so that open streams cost neither
/// a thread nor a large buffer each: a stream is its socket, a few hundred bytes of state and the
/// bytes queued on it.
///
/// A request handler hands a connection over with adopt() once the response head is on the wire
/// (see takeOverConnection() in stream_handoff.h). From then on the reactor owns the descriptor:
/// it writes what send() queues, in order, without blocking; reads and discards whatever the
/// client sends; writes a heartbeat comment on idle streams; notices the client leaving; and
/// closes the connection on close(), on overflow, or on shutdown.
///
/// THREADING: every public function may be called from any thread, including from an OnClosed
/// callback, except shutdown() and the destructor, which must not run on the reactor thread (from
/// a callback). OnClosed callbacks run on the reactor thread, one at a time, never while the
/// reactor's lock is held; a callback that blocks stalls every stream, so keep them short.
class StreamReactor {
public:
    using Options = StreamReactorOptions;

    /// Called exactly once per adopted stream when it has ended and its descriptor is closed, on
    /// the reactor thread. It may call send()/close()/adopt()/openStreams() on this reactor.
    /// Exceptions it throws are logged and dropped.
    using OnClosed = std::function<void(StreamId, CloseReason)>;

    StreamReactor();
    explicit StreamReactor(Options options);
    /// shutdown() with zero grace: queued bytes that the kernel does not take at once are dropped,
    /// every open stream is closed and its OnClosed runs (with CloseReason::shutdown) before the
    /// destructor returns. Whatever those callbacks touch must still be alive.
    ~StreamReactor();
    StreamReactor(const StreamReactor&) = delete;
    StreamReactor& operator=(const StreamReactor&) = delete;

    /// Creates the epoll set and starts the reactor thread. Fails with invalid_argument for
    /// unusable options, conflict when called twice, io when the kernel refuses the epoll set,
    /// the eventfd or the thread.
    Result<void> start();

    /// Takes ownership of `fd`, a connected stream socket whose HTTP response head has been sent,
    /// and makes it non-blocking (O_NONBLOCK is shared with every duplicate of the descriptor).
    /// `onClosed` may be empty. On failure the descriptor is closed, `onClosed` is never called
    /// and the error says why: invalid_argument (not a stream socket), unavailable (not started,
    /// shutting down, or max_streams reached), io (the kernel refused).
    Result<StreamId> adopt(int fd, OnClosed onClosed);

    /// Queues `bytes` (typically formatSseEvent() output) after everything sent before on this
    /// stream; the reactor thread writes them. Bytes sent from one thread arrive in that order.
    /// Returns false, queueing nothing, when the stream is unknown, has ended, is closing
    /// (close() or shutdown() was called), or when the bytes would exceed max_buffered_bytes, in
    /// which case the stream is disconnected with CloseReason::overflow. true means queued, not
    /// delivered: a client can still vanish before reading them.
    bool send(StreamId id, std::string bytes);

    /// Graceful close: later send() calls fail; what is already queued is written, then the
    /// connection is shut down and closed and OnClosed reports closed_by_server (or whatever
    /// ended it first). Returns at once. Unknown or already closing streams are ignored.
    void close(StreamId id);

    /// Streams adopted and not yet ended (a stream counts until just before its OnClosed runs).
    std::size_t openStreams() const;

    /// Refuses further adopt() and send(), writes what is queued for at most `grace`, then closes
    /// every stream (CloseReason::shutdown for those not already closing) and stops the thread.
    /// Blocks until every OnClosed has run. Later calls do nothing.
    void shutdown(std::chrono::milliseconds grace);

private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
};

}  // namespace crank::http
