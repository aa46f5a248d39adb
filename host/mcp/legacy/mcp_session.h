#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>

#include "mcp/legacy/replay_budget.h"
#include "mcp/wire/client_capabilities.h"
#include "mcp/wire/log_level.h"

namespace crank::mcp {

/// Where a stream's bytes go while a client connection is attached to it. Both functions are
/// non-blocking (the stream reactor queues) and may be called under the session's lock.
struct StreamConnection {
    std::uint64_t token = 0;                ///< identifies this attachment (detach checks it)
    std::function<bool(std::string)> send;  ///< false: the connection is gone
    std::function<void()> close;            ///< flush what is queued, then close
};

/// Bounds of the per-session resumption buffer, and the reconnection hint given to clients.
struct ReplayLimits {
    std::size_t events_per_stream = 256;
    std::size_t bytes_per_session = std::size_t{1024} * 1024;
    /// The `retry:` field of priming events: how long a client waits before it reconnects.
    int retry_ms = 1000;
    /// Streams kept only for a resumption (finished, or a GET stream whose client went away),
    /// per session: beyond this many the oldest are forgotten, whatever their replay buffers.
    std::size_t streams_per_session = 64;
    /// Every session's replay buffers together (mcp.replay_budget_bytes); null: no node bound.
    std::shared_ptr<ReplayBudget> budget{};
};

/// One MCP session: its negotiated version, its logging level, its SSE streams with their
/// replay buffers, and the requests in flight (for notifications/cancelled). Thread-safe.
///
/// Streams: every SSE response (a GET stream, or a POST answered with text/event-stream) is a
/// numbered stream. Its events carry ids "<stream>-<sequence>", unique within the session, so a
/// Last-Event-ID names the stream to resume and where. Each event is kept in a bounded replay
/// buffer (events per stream, bytes per session: the oldest go first) and written to the
/// attached connection, if any. A dropped connection only detaches; the work goes on and its
/// events wait in the buffer for a GET with Last-Event-ID.
class McpSession {
public:
    McpSession(std::string id, std::string protocolVersion, ReplayLimits limits);
    /// Gives what it keeps for resumption back to the node's budget.
    ~McpSession();
    McpSession(const McpSession&) = delete;
    McpSession& operator=(const McpSession&) = delete;

    const std::string& id() const { return id_; }
    const std::string& protocolVersion() const { return protocolVersion_; }
    /// The agent that opened the session ("" when auth.mode is "none"). Set once, at creation,
    /// before the id is handed out; only that agent may use the session.
    const std::string& agent() const { return agent_; }
    void setAgent(std::string agent) { agent_ = std::move(agent); }
    /// The workspace whose endpoint created the session; it is used there only. Set like agent.
    const std::string& workspace() const { return workspace_; }
    void setWorkspace(std::string workspace) { workspace_ = std::move(workspace); }

    void touch();
    std::chrono::steady_clock::time_point lastUsed() const;

    bool initialized() const { return initialized_.load(); }
    void setInitialized() { initialized_ = true; }
    LogLevel logLevel() const { return static_cast<LogLevel>(logLevel_.load()); }
    void setLogLevel(LogLevel level) { logLevel_ = static_cast<int>(level); }

    /// A new stream; `standalone` for GET streams (server-initiated messages go there).
    std::uint64_t openStream(bool standalone);
    /// Attaches a connection to a stream and writes a priming event (an id, empty data) so that
    /// the client has a Last-Event-ID even before the first message. Takes a held place.
    void attach(std::uint64_t stream, StreamConnection connection);
    /// The connection `token` of `stream` went away (peer closed). Work on the stream goes on.
    void detach(std::uint64_t stream, std::uint64_t token);
    /// Sends one JSON-RPC message (JSON text) on `stream` as an SSE event.
    void send(std::uint64_t stream, std::string_view message);
    /// The stream's last message was sent: close its connection once flushed. A later resume
    /// replays what was missed and closes.
    void finish(std::uint64_t stream);
    /// Sends a server-initiated message on the most recently attached standalone stream; false
    /// when the session has none (the message is dropped, as the specification allows).
    bool sendStandalone(std::string_view message);

    /// Resumes the stream named by `lastEventId` on `connection`: replays the events after it,
    /// then attaches (or closes, when the stream has finished). False when the id does not name
    /// a stream of this session. Takes a held place either way.
    bool resume(std::string_view lastEventId, StreamConnection connection);
    /// True when `lastEventId` names a stream of this session that resume() can continue.
    bool canResume(std::string_view lastEventId) const;

    /// Closes every attached connection (session deleted or expired); ended() is true after.
    void closeAll();
    bool ended() const { return ended_.load(); }

    /// Registers a request in flight; the returned flag turns true when it is cancelled. A key
    /// already in flight keeps its flag (the transport registers a call before its stream's
    /// priming event, the call's ToolCall again when it starts): a cancel in between is kept.
    std::shared_ptr<std::atomic<bool>> beginRequest(const std::string& requestKey);
    void endRequest(const std::string& requestKey);
    /// Marks a request in flight as cancelled; false when no such request runs.
    bool cancelRequest(const std::string& requestKey);

    /// When the oldest event kept for resumption was sent; nullopt when none is kept.
    std::optional<std::chrono::steady_clock::time_point> oldestReplayEvent() const;
    /// Forgets the oldest events kept for resumption, across the session's streams, until
    /// `bytes` are freed or none is left; returns the bytes freed.
    std::size_t dropOldestReplay(std::size_t bytes);

    /// Number of streams with an attached connection.
    std::size_t attachedStreams() const;
    /// Holds a place for a connection about to be attached: false when `limit` connections are
    /// attached or held already. The check and the hold are one step, so two GETs racing cannot
    /// both pass the bound (the 200 goes out before attach()). attach() and resume() take the
    /// place; releaseStreamPlace() gives back one that neither took.
    bool holdStreamPlace(std::size_t limit);
    void releaseStreamPlace();

    /// Keeps `held` (a quota's place, say) alive as long as the session object lives.
    void keepUntilEnd(std::shared_ptr<void> held) { held_ = std::move(held); }

    /// The client's `capabilities` from initialize (JSON object text). Set once, at creation.
    const ClientCapabilities& clientCapabilities() const { return clientCapabilities_; }
    void setClientCapabilities(std::string json) {
        clientCapabilities_ = ClientCapabilities(std::move(json));
    }

    /// Requests to the client (sampling, elicitation, roots), answered by a later POST.
    /// Registers one and returns its id, unique within the session ("crank-s2c-N").
    std::string beginClientRequest();
    /// The client's answer to request `id_json` (the id as JSON text): `ok` and the result's
    /// JSON text, or not ok and the error object's. False when no such request waits.
    bool deliverClientAnswer(const std::string& id_json, bool ok, std::string json);
    /// Waits for the answer to `id` until `deadline`, or until `*cancelled` turns true
    /// (checked every 50 ms, may be null); then forgets the request. nullopt: no answer.
    std::optional<std::pair<bool, std::string>> awaitClientAnswer(
        const std::string& id, std::chrono::steady_clock::time_point deadline,
        const std::function<bool()>& cancelled);

private:
    struct Event {
        std::uint64_t seq;
        std::string bytes;
        std::chrono::steady_clock::time_point sent;
    };
    struct Stream {
        bool standalone = false;
        bool finished = false;
        std::uint64_t nextSeq = 1;
        std::deque<Event> replay;
        std::optional<StreamConnection> connection;
    };

    std::string appendEvent(std::uint64_t number, Stream& stream, std::string_view data);
    void evictForBudget();
    /// replayBytes_ changes by +n / -n, and the node's budget with it.
    void keptReplay(std::size_t n);
    void forgotReplay(std::size_t n);
    /// True for a stream that only waits to be resumed: no connection, and nothing more will be
    /// sent on it (finished, or a standalone stream that is no longer the current one).
    bool waitsForResumeOnly(std::uint64_t number, const Stream& stream) const;
    /// Forgets the oldest such streams beyond ReplayLimits::streams_per_session.
    void pruneStreams();
    /// attachedStreams() with mutex_ held.
    std::size_t attachedLocked() const;
    /// One held place fewer (none below zero), with mutex_ held.
    void takeHeldPlace();

    const std::string id_;
    const std::string protocolVersion_;
    const ReplayLimits limits_;
    std::string workspace_ = "default";
    std::string agent_;
    std::atomic<bool> initialized_{false};
    std::atomic<bool> ended_{false};
    std::atomic<int> logLevel_{static_cast<int>(LogLevel::info)};
    std::atomic<std::int64_t> lastUsedTicks_;

    mutable std::mutex mutex_;
    std::map<std::uint64_t, Stream> streams_;
    std::uint64_t nextStream_ = 1;
    std::size_t replayBytes_ = 0;
    std::optional<std::uint64_t> lastStandalone_;
    std::size_t heldPlaces_ = 0;  ///< see holdStreamPlace()
    std::unordered_map<std::string, std::shared_ptr<std::atomic<bool>>> inflight_;
    ClientCapabilities clientCapabilities_;
    std::shared_ptr<void> held_;

    std::mutex clientMutex_;
    std::condition_variable clientAnswered_;
    std::uint64_t nextClientRequest_ = 1;
    /// id (as JSON text) -> the answer once it came
    std::map<std::string, std::optional<std::pair<bool, std::string>>> clientRequests_;
};

}  // namespace crank::mcp
