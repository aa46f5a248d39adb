#include "runtime/polled_stream.h"

#include <condition_variable>
#include <deque>
#include <exception>
#include <limits>
#include <mutex>
#include <system_error>
#include <utility>

#include <fmt/format.h>

#include "plugins/adapter_handle.h"
#include "runtime/live_session.h"
#include "runtime/unary_call.h"

namespace crank::runtime {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

UpstreamPage requestPage(const Operation& op, const PreparedRequest& request,
                         const std::atomic<bool>* cancelled, Clock::time_point deadline,
                         std::size_t max_bytes, std::size_t max_items) {
    const config::ExecutionConfig& e = op.config.execution;
    UpstreamPage page;
    // The responses (normally one) are bounded by bytes; their number by max_items of the
    // execution block, as for a polling window.
    UnaryCall upstream(op.config.name, op.scrubber, nullptr, false, cancelled,
                       static_cast<std::size_t>(e.max_items), max_bytes, deadline);
    const crank_request view = request.view(op);
    const crank_status status = op.adapter->unaryCall(upstream, view);
    upstream.close();
    if (cancelled != nullptr && cancelled->load()) {
        page.cancelled = true;
        return page;
    }
    if (upstream.overflowed()) {
        page.error = UpstreamError{
            "resource_exhausted",
            fmt::format("the upstream's response is larger than max_bytes ({} bytes)", max_bytes)};
        return page;
    }
    std::vector<std::string> responses = upstream.takeItems();
    // A plugin that gave up at the deadline (is_cancelled) may return ok without a response.
    const bool timedOut = upstream.timedOut() && (status != CRANK_OK || responses.empty());
    if (status != CRANK_OK || timedOut) {
        std::optional<UpstreamError> error = upstream.error();
        if (!error && timedOut) {
            error = UpstreamError{"timeout", fmt::format("the upstream did not answer within "
                                                         "upstream_timeout_ms ({} ms)",
                                                         e.upstream_timeout_ms)};
        }
        page.error = error.value_or(
            UpstreamError{"internal", "the plugin reported a failure without a reason"});
        return page;
    }
    page.cursor = upstream.cursor();
    for (const std::string& response : responses) {
        auto mapped = op.output_mapping->map(response, max_items);
        if (!mapped) {
            page.error = UpstreamError{"protocol", mapped.error().message};
            return page;
        }
        for (std::string& item : mapped->items) {
            page.items.push_back(std::move(item));
        }
        if (mapped->cursor) {
            page.cursor = std::move(mapped->cursor);
        }
        if (mapped->done.value_or(false)) {
            page.done = true;
        }
    }
    return page;
}

struct PolledStream::State {
    OperationPtr op;
    PreparedRequest request;
    std::shared_ptr<LiveSession> session;
    std::atomic<bool> cancelled{false};  // also the `stopping` flag of every UnaryCall
    std::mutex mutex;                    // resume, and the waits on wake
    std::condition_variable wake;
    bool resume = false;
};

namespace {

using State = PolledStream::State;

bool stopped(const State& s) {
    return s.cancelled.load() || s.session->isCancelled();
}

/// Sleeps until `until`; false when cancelled first.
bool sleepUntil(State& s, Clock::time_point until) {
    std::unique_lock<std::mutex> lock(s.mutex);
    s.wake.wait_until(lock, until, [&s] { return stopped(s); });
    return !stopped(s);
}

/// Waits for the buffer's resume; false when cancelled first.
bool waitForResume(State& s) {
    std::unique_lock<std::mutex> lock(s.mutex);
    s.wake.wait(lock, [&s] { return s.resume || stopped(s); });
    s.resume = false;
    return !stopped(s);
}

/// Offers the items a page left, in order; false when cancelled first. Under the pause policy
/// an item the buffer refused stays at the front and goes again after the resume.
bool deliver(State& s, std::deque<std::string>& pending) {
    SessionBuffer& buffer = s.session->buffer();
    while (!pending.empty()) {
        if (stopped(s)) {
            return false;
        }
        switch (buffer.offer(std::move(pending.front()))) {
            case SessionBuffer::Offer::accepted:
            case SessionBuffer::Offer::dropped:
                pending.pop_front();
                break;
            case SessionBuffer::Offer::accepted_pause:
                pending.pop_front();
                if (!waitForResume(s)) {
                    return false;
                }
                break;
            case SessionBuffer::Offer::rejected_full:
                if (!waitForResume(s)) {
                    return false;
                }
                break;
        }
    }
    return !stopped(s);
}

/// The stream's life; returns how it completed.
crank_status run(State& s) {
    const config::ExecutionConfig& e = s.op->config.execution;
    const milliseconds interval(e.poll_interval_ms);
    const milliseconds timeout(e.upstream_timeout_ms);
    // A response is bounded by max_bytes, so its items by their count too: no cut by number
    // (a cut would lose the items past it, the cursor having moved on).
    constexpr std::size_t kAllItems = std::numeric_limits<std::size_t>::max();
    std::deque<std::string> pending;
    std::optional<std::string> pageCursor;
    bool done = false;
    Clock::time_point nextRequest = Clock::now();
    while (true) {
        if (!deliver(s, pending)) {
            return CRANK_CANCELLED;
        }
        if (pageCursor) {
            s.session->setCursor(*pageCursor);
            pageCursor.reset();
        }
        if (done) {
            return CRANK_OK;
        }
        if (!sleepUntil(s, nextRequest)) {
            return CRANK_CANCELLED;
        }
        const Clock::time_point sent = Clock::now();
        nextRequest = sent + interval;
        UpstreamPage page = requestPage(*s.op, s.request, &s.cancelled, sent + timeout,
                                        static_cast<std::size_t>(e.max_bytes), kAllItems);
        if (page.cancelled || stopped(s)) {
            return CRANK_CANCELLED;
        }
        for (const std::string& item : page.items) {
            if (std::optional<std::string> screened = s.session->screen(item)) {
                pending.push_back(std::move(*screened));
            }
        }
        if (page.error) {
            // What the failing page gave before its error still reaches the buffer, as a
            // plugin's items before its set_error would; no pause is waited for then.
            for (std::string& item : pending) {
                (void)s.session->buffer().offer(std::move(item));
            }
            s.session->fail(std::move(*page.error));
            return CRANK_ERROR;
        }
        if (page.cursor) {
            s.request.cursor = *page.cursor;
            pageCursor = std::move(page.cursor);
        }
        done = page.done;
    }
}

void* threadMain(void* arg) {
    const std::unique_ptr<std::shared_ptr<State>> owned(static_cast<std::shared_ptr<State>*>(arg));
    State& s = **owned;
    crank_status status = CRANK_ERROR;
    try {
        status = run(s);
    } catch (const std::exception& ex) {  // out of memory, most likely
        s.session->fail(UpstreamError{"internal", std::string("polling failed: ") + ex.what()});
    } catch (...) {
        s.session->fail(UpstreamError{"internal", "polling failed"});
    }
    // The last thing the thread does with the session: the registry joins it after this.
    s.session->complete(status);
    return nullptr;
}

}  // namespace

Result<std::unique_ptr<PolledStream>> PolledStream::start(OperationPtr op, PreparedRequest request,
                                                          std::shared_ptr<LiveSession> session) {
    auto state = std::make_shared<State>();
    state->op = std::move(op);
    state->request = std::move(request);
    state->session = std::move(session);
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setstacksize(&attr, kStackBytes);
    auto* arg = new std::shared_ptr<State>(state);  // owned by the thread from here
    pthread_t thread{};
    const int rc = pthread_create(&thread, &attr, &threadMain, arg);
    pthread_attr_destroy(&attr);
    if (rc != 0) {
        delete arg;  // NOLINT(cppcoreguidelines-owning-memory): the thread never took it
        return Error{ErrorCode::unavailable,
                     fmt::format("crankd could not start the thread that polls the upstream: {}",
                                 std::error_code(rc, std::generic_category()).message())};
    }
    return std::unique_ptr<PolledStream>(new PolledStream(std::move(state), thread));
}

PolledStream::PolledStream(std::shared_ptr<State> state, pthread_t thread)
    : state_(std::move(state)), thread_(thread) {}

PolledStream::~PolledStream() {
    if (joined_) {
        return;
    }
    cancel();
    if (state_->session->completion()) {
        pthread_join(thread_, nullptr);
    } else {
        pthread_detach(thread_);
    }
}

void PolledStream::cancel() {
    {
        const std::lock_guard<std::mutex> lock(state_->mutex);
        state_->cancelled.store(true);
    }
    state_->wake.notify_all();
}

void PolledStream::resume() {
    {
        const std::lock_guard<std::mutex> lock(state_->mutex);
        state_->resume = true;
    }
    state_->wake.notify_all();
}

void PolledStream::join() {
    if (!joined_) {
        pthread_join(thread_, nullptr);
        joined_ = true;
    }
}

}  // namespace crank::runtime
