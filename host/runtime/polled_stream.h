#pragma once

// The host-run stream of a session over a request/response upstream (execution mode `session`
// with transport_behavior `request_response`, e.g. a long-poll API): the host calls the adapter's
// unary_call again and again, maps every response with the operation's output mapping
// (items_path, cursor_path, done_path) and feeds its items into the session (LiveSession: the
// safety stage, then the bounded SessionBuffer), as a streaming plugin's emits would go.
//
// - Each request is a fresh call (deadline upstream_timeout_ms) carrying the previous page's
//   cursor (request.cursor: cursor_path, else the plugin's set_cursor); the next request starts
//   poll_interval_ms after the previous one started (the wait is interruptible).
// - done_path true: the page's items are delivered, then the stream completes (ok). An upstream
//   error, a response past max_bytes or one the mapping cannot read: it fails with that error.
// - Backpressure (overflow_policy pause): when the buffer asks to pause or refuses an item, no
//   request is sent until a poll frees room (resume()); the items of the page that did not fit
//   are kept and offered again first, so nothing is lost and order holds. drop_oldest: requests
//   go on and the buffer drops.
// - The session's upstream cursor (LiveSession::setCursor) follows the page cursor once all of
//   its page's items are in the buffer.
//
// Threading: one thread per stream, with a 1 MiB stack (kStackBytes) instead of the default
// 8 MiB, asleep on a condition variable between requests; sessions are bounded by
// SessionRegistry::Options::max_sessions, so are these threads. cancel() wakes it at once and
// makes the request in flight see is_cancelled; the stream then completes (cancelled).

#include <atomic>
#include <chrono>
#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "runtime/operation.h"
#include "runtime/prepared_request.h"
#include "runtime/window_result.h"
#include "util/error.h"
#include <pthread.h>

namespace crank::runtime {

class LiveSession;

/// One request to a request/response upstream, its response(s) mapped through the operation's
/// output mapping. The unit that polling a request/response upstream repeats (a session's
/// PolledStream; a window's polling loop could use it too).
struct UpstreamPage {
    std::vector<std::string> items;  ///< items_path's items, in order
    /// The page's cursor: cursor_path's value, else the cursor the plugin set.
    std::optional<std::string> cursor;
    bool done = false;  ///< done_path said so
    /// Set when the page failed: the plugin's error, a timeout, a response past `max_bytes`
    /// ("resource_exhausted"), or a response the mapping cannot read ("protocol"). `items`
    /// then holds what the responses before the failing one gave.
    std::optional<UpstreamError> error;
    bool cancelled = false;  ///< `cancelled` was set: the call was abandoned, nothing else holds
};

/// Sends one request (`request`, with its cursor) through `op`'s adapter and maps the answer.
/// The call is cancelled when `cancelled` becomes true or `deadline` passes; its responses are
/// bounded by `max_bytes` in all; each response gives at most `max_items` items.
UpstreamPage requestPage(const Operation& op, const PreparedRequest& request,
                         const std::atomic<bool>* cancelled,
                         std::chrono::steady_clock::time_point deadline, std::size_t max_bytes,
                         std::size_t max_items);

class PolledStream {
public:
    static constexpr std::size_t kStackBytes = std::size_t{1024} * 1024;

    /// Starts polling `op`'s upstream with `request` into `session` on a new thread. Errors
    /// (ErrorCode::unavailable): the thread could not be created.
    static Result<std::unique_ptr<PolledStream>> start(OperationPtr op, PreparedRequest request,
                                                       std::shared_ptr<LiveSession> session);

    /// Cancels; joins the thread when the session has completed, else leaves it to finish on
    /// its own (it owns everything it uses; its plugin must stay loaded, as for a stream that
    /// did not complete after its cancel).
    ~PolledStream();
    PolledStream(const PolledStream&) = delete;
    PolledStream& operator=(const PolledStream&) = delete;
    PolledStream(PolledStream&&) = delete;
    PolledStream& operator=(PolledStream&&) = delete;

    /// Stops polling: wakes the thread and cancels the request in flight. The session then
    /// completes (cancelled) unless it already had.
    void cancel();
    /// The buffer has room again (SessionBuffer::takeResume): a paused stream goes on.
    void resume();
    /// Waits for the thread to end. Call it once the session has completed: the thread is then
    /// at its very end.
    void join();

    struct State;

private:
    PolledStream(std::shared_ptr<State> state, pthread_t thread);

    std::shared_ptr<State> state_;
    pthread_t thread_;
    bool joined_ = false;
};

}  // namespace crank::runtime
